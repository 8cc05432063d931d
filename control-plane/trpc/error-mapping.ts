import { TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { AppError } from '../errors/app-error.ts';
import type { WireError } from '../errors/coerce-error.ts';
import { httpStatusFor, type ErrorCode } from '../errors/error-catalog.ts';
import { quotedPath } from '../errors/quoted-input.ts';

type TrpcCode = TRPCError['code'];

const trpcCodeByStatus: Record<number, TrpcCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  // tRPC has no code of its own for an unmet Expect: the request is the caller's to change.
  417: 'BAD_REQUEST',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

/** The tRPC error code whose status matches a catalog code's. */
export function trpcCodeFor(code: ErrorCode): TrpcCode {
  return trpcCodeByStatus[httpStatusFor(code)] ?? 'INTERNAL_SERVER_ERROR';
}

/**
 * tRPC's error shape for a wire error, whoever raised it (a procedure, tRPC, or the service's own
 * middleware): the JSON-RPC code of the status the caller gets, and the catalog's code in `data`.
 * The path is the one the caller sent, quoted as a message quotes one (a procedure no router has
 * can be 16 KiB of it).
 */
export function trpcErrorShape(wire: WireError, path: string | undefined, requestId: string | undefined) {
  const httpStatus = httpStatusFor(wire.code);
  return {
    message: wire.message,
    code: TRPC_ERROR_CODES_BY_KEY[trpcCodeFor(wire.code)],
    data: { code: wire.code, httpStatus, path: path === undefined ? undefined : quotedPath(path), details: wire.details, requestId },
  };
}

/** Domain error → tRPC error with the matching status; the AppError rides along as `cause`. */
export function appErrorToTrpc(error: AppError): TRPCError {
  return new TRPCError({ code: trpcCodeFor(error.code), message: error.message, cause: error });
}
