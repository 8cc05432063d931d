import type { WireError } from '../errors/coerce-error.ts';

/**
 * Variant B's success envelope around data that is already JSON (as the REST projection hands it
 * over), so the body is not parsed and serialised a second time on every request.
 */
export function successEnvelopeJson(dataJson: string | undefined, requestId: string): string {
  return `{"success":true,"data":${dataJson || 'null'},"metadata":${JSON.stringify({ timestamp: new Date().toISOString(), requestId })}}`;
}

/** Variant B's failure envelope. */
export function errorEnvelope(error: WireError, requestId: string) {
  return { success: false as const, error, metadata: { timestamp: new Date().toISOString(), requestId } };
}
