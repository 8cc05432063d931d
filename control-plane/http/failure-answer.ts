import { failureMetaFor, type ErrorCode } from '../errors/error-catalog.ts';

/**
 * What a 401 must carry (RFC 9110 §15.5.2): a challenge naming a way to authenticate. Bearer
 * tokens are one; X-API-Key, the other, has no registered scheme to name.
 */
export const AUTHENTICATION_CHALLENGE = 'Bearer realm="specwright"';

/** The status and headers of an answer that fails with `code`: the catalog's, and a 401's challenge. */
export function failureAnswerFor(code: ErrorCode): { status: number; headers?: Record<string, string> } {
  const meta = failureMetaFor(code);
  return meta.status === 401 ? { ...meta, headers: { ...meta.headers, 'WWW-Authenticate': AUTHENTICATION_CHALLENGE } } : meta;
}
