import { TRPCClientError } from '@trpc/client';
import type { AppRouter } from '../control-plane/router.ts';

/** The catalog code of a failure the service answered: `NOT_FOUND`, `VALIDATION_ERROR`, `RATE_LIMITED`, … */
export type SpecwrightErrorCode = NonNullable<TRPCClientError<AppRouter>['data']>['code'];

/** What the service answered about a failed call (`error.data` of tRPC's error, typed, with the answer's Retry-After). */
export interface SpecwrightServiceError {
  code: SpecwrightErrorCode;
  message: string;
  /** The status the call answered (a call in a batch has its own, though the batch answers 207). */
  httpStatus: number;
  /** The procedure called, e.g. `apiKeys.create`, when the service could tell. */
  path?: string;
  details?: Record<string, unknown>;
  /** A VALIDATION_ERROR's field-level issues (at most 100; a last `(more)` entry counts the rest); else empty. */
  issues: Array<{ field: string; issue: string }>;
  /** Quote it to find the service's log line (it is also the answer's `X-Request-ID`). */
  requestId?: string;
  /** A RATE_LIMITED or SERVICE_UNAVAILABLE answer's Retry-After: how many seconds to wait before trying again. */
  retryAfterSeconds?: number;
}

/**
 * A call that got no answer from the service: it could not be reached (`status` null), or something
 * else answered (a proxy's 502 or 413 page, the REST surface at a `url` ending in /api). A failed
 * call rejects with tRPC's `TRPCClientError`, whose `cause` this is.
 */
export class SpecwrightTransportError extends Error {
  override name = 'SpecwrightTransportError';
  /** The HTTP status of the answer that was not the service's; null when none came. */
  readonly status: number | null;
  /** That answer's Retry-After (a proxy's 429 or 503): how many seconds to wait before trying again. */
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, status: number | null, options?: ErrorOptions & { retryAfterSeconds?: number }) {
    super(message, options);
    this.status = status;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

/**
 * The service's answer to a failed call, typed: its code, message, status, details, request id and
 * Retry-After. Undefined when the service gave none: the call could not be sent or was aborted, or
 * something other than the service answered (then `error.cause` is a SpecwrightTransportError).
 */
export function serviceErrorOf(error: unknown): SpecwrightServiceError | undefined {
  if (!(error instanceof TRPCClientError)) return undefined;
  const data = (error as TRPCClientError<AppRouter>).data;
  if (!data?.code) return undefined;
  const issues = Array.isArray(data.details?.issues) ? (data.details.issues as SpecwrightServiceError['issues']) : [];
  const failure: SpecwrightServiceError = { code: data.code, message: error.message, httpStatus: data.httpStatus, issues };
  if (data.path !== undefined) failure.path = data.path;
  if (data.details !== undefined) failure.details = data.details;
  if (data.requestId) failure.requestId = data.requestId;
  // A batch answers with one set of headers: its Retry-After concerns the calls that say to retry.
  const response = error.meta?.response;
  const retryAfter = (data.code === 'RATE_LIMITED' || data.code === 'SERVICE_UNAVAILABLE') && response instanceof Response ? retryAfterSecondsIn(response.headers) : undefined;
  if (retryAfter !== undefined) failure.retryAfterSeconds = retryAfter;
  return failure;
}

/** The catalog code (NOT_FOUND, VALIDATION_ERROR, …) of a failed call, if the service answered it. */
export function errorCodeOf(error: unknown): SpecwrightErrorCode | undefined {
  return serviceErrorOf(error)?.code;
}

/**
 * An HTTP-date as RFC 9110 writes it (`Sun, 06 Nov 1994 08:49:37 GMT`, or its two obsolete forms).
 * Date.parse alone reads `-1` or `a 1` as dates in 2001, which would say "retry now".
 */
const HTTP_DATE = /^[A-Za-z]{3,9},? [\w -]+ \d\d:\d\d:\d\d( GMT| \d{4})$/;

/** Retry-After in seconds, from delta-seconds or an HTTP-date; undefined when absent or not one of those. */
export function retryAfterSecondsIn(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number.isSafeInteger(Number(value)) ? Number(value) : undefined;
  const at = HTTP_DATE.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
