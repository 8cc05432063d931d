/**
 * The error codes of the wire contract (seed §7) and the HTTP status each one answers with.
 * Every failure that leaves the service carries one of these codes.
 */
export const errorCatalog = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  /** A path the REST surface has, asked with a method it does not take; the answer's Allow lists those it does. */
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** An Expect header the service cannot meet (anything but 100-continue); the request is not run. */
  EXPECTATION_FAILED: 417,
  IDEMPOTENCY_MISMATCH: 422,
  RATE_LIMITED: 429,
  BUDGET_EXCEEDED: 402,
  PHASE_INVALID: 400,
  READINESS_FAILED: 400,
  AGENT_ERROR: 500,
  PERMISSION_DENIED: 403,
  TEMPLATE_INVALID: 400,
  WORKFLOW_INVALID: 400,
  INTEGRATION_FAILED: 500,
  GAPS_BLOCKED: 402,
  ORG_NOT_MEMBER: 403,
  INVITE_EXPIRED: 400,
  SLUG_TAKEN: 409,
  SESSION_INCOMPLETE: 400,
  OBLIGATION_UNRESOLVED: 400,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof errorCatalog;

export const errorCodes = Object.keys(errorCatalog) as [ErrorCode, ...ErrorCode[]];

export function httpStatusFor(code: ErrorCode): number {
  return errorCatalog[code];
}

/**
 * How long a caller should wait before trying again after a SERVICE_UNAVAILABLE (its Retry-After):
 * every cause of one passes quickly (a conflict with a concurrent request, a busy checker, a
 * database that is restarting, a key ring not loaded yet or an identity provider whose keys could
 * not be fetched). A RATE_LIMITED answer says its own.
 */
const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** The Retry-After an answer with this code carries, if the code alone decides one. */
export function retryAfterFor(code: ErrorCode): string | undefined {
  return code === 'SERVICE_UNAVAILABLE' ? String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS) : undefined;
}

/** The status and headers of an answer that fails with `code` (the headers only when it has any). */
export function failureMetaFor(code: ErrorCode): { status: number; headers?: Record<string, string> } {
  const retryAfter = retryAfterFor(code);
  return retryAfter ? { status: httpStatusFor(code), headers: { 'Retry-After': retryAfter } } : { status: httpStatusFor(code) };
}
