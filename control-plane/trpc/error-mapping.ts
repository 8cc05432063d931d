import { TRPCError } from '@trpc/server';
import { AppError } from '../errors/app-error.ts';
import { httpStatusFor, type ErrorCode } from '../errors/error-catalog.ts';

type TrpcCode = TRPCError['code'];

const trpcCodeByStatus: Record<number, TrpcCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

/** The tRPC error code whose status matches a catalog code's. */
export function trpcCodeFor(code: ErrorCode): TrpcCode {
  return trpcCodeByStatus[httpStatusFor(code)] ?? 'INTERNAL_SERVER_ERROR';
}

/** Domain error → tRPC error with the matching status; the AppError rides along as `cause`. */
export function appErrorToTrpc(error: AppError): TRPCError {
  return new TRPCError({ code: trpcCodeFor(error.code), message: error.message, cause: error });
}
