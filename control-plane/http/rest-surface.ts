import type { WireError } from '../errors/coerce-error.ts';
import { errorEnvelope, successEnvelopeJson } from './envelope.ts';

/**
 * How one REST surface writes its bodies (DESIGN §5.1). Variant B (`/api`) wraps every answer in
 * its envelope; Variant A (`/api/basic`) sends the resource or list bare and its error as
 * `{code, message, details?}`, the request id riding in X-Request-ID alone.
 */
export interface RestSurface {
  /** The body of a success, around data the projection has already serialised. */
  successBody(dataJson: string | undefined, requestId: string): string;
  /** The body of a failure. */
  failureBody(error: WireError, requestId: string): unknown;
}

export const variantB: RestSurface = {
  successBody: successEnvelopeJson,
  failureBody: errorEnvelope,
};

export const variantA: RestSurface = {
  successBody: (dataJson) => dataJson || 'null',
  failureBody: ({ code, message, details }) => (details === undefined ? { code, message } : { code, message, details }),
};

/** Where Variant A is served. */
export const VARIANT_A_BASE = '/api/basic';

/** Whether a request path (as sent, in any letter case, as routing takes it) is on Variant A. */
export function isVariantAPath(path: string): boolean {
  const lower = path.toLowerCase();
  return lower === VARIANT_A_BASE || lower.startsWith(`${VARIANT_A_BASE}/`);
}
