import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { toWireError } from '../errors/coerce-error.ts';
import type { Context } from './context.ts';

export type ProcedureMeta = {
  /** HTTP status of a successful REST call (201 for creates); 200 when absent. */
  successStatus?: 200 | 201 | 202 | 204;
};

/** The one initTRPC of the service. Only the base procedures in procedures.ts are exported on. */
export const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta<ProcedureMeta>>()
  .create({
    errorFormatter({ shape, error, ctx }) {
      const wire = toWireError(error);
      return {
        ...shape,
        message: wire.message,
        data: {
          code: wire.code,
          httpStatus: shape.data.httpStatus,
          path: shape.data.path,
          details: wire.details,
          requestId: ctx?.requestId,
        },
      };
    },
  });

export const router = t.router;
