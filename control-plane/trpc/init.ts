import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { toWireError } from '../errors/coerce-error.ts';
import type { Context } from './context.ts';
import { trpcErrorShape } from './error-mapping.ts';

/**
 * The request id of errors raised before a context exists (a malformed batch, a GET of a mutation):
 * the adapter's onError sees the request, the formatter only the error.
 */
const requestIdOfError = new WeakMap<object, string>();
export function rememberRequestId(error: object, requestId: string): void {
  requestIdOfError.set(error, requestId);
}

export type ProcedureMeta = {
  /** HTTP status of a successful REST call (201 for creates); 200 when absent. */
  successStatus?: 200 | 201 | 202 | 204;
  /** A public procedure one of whose modes acts as the caller when credentials are sent (the document says they are optional). */
  credentialsOptional?: true;
  /** A query that may write (issuing an organization's first credential key): it runs in a transaction that can. */
  writes?: true;
};

/** The one initTRPC of the service. Only the base procedures in procedures.ts are exported on. */
export const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta<ProcedureMeta>>()
  .create({
    errorFormatter({ shape, error, ctx }) {
      // The code is the one of the status the caller gets, whatever tRPC called the failure (a GET
      // of a mutation is tRPC's METHOD_NOT_SUPPORTED, answered as NOT_FOUND).
      return trpcErrorShape(toWireError(error), shape.data.path, ctx?.requestId ?? requestIdOfError.get(error));
    },
  });

export const router = t.router;
