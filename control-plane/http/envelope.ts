import type { Response } from 'express';
import { httpStatusFor } from '../errors/error-catalog.ts';
import type { WireError } from '../errors/coerce-error.ts';

/** Variant B's success envelope. */
export function successEnvelope(data: unknown, requestId: string) {
  return { success: true as const, data, metadata: { timestamp: new Date().toISOString(), requestId } };
}

/** Variant B's failure envelope. */
export function errorEnvelope(error: WireError, requestId: string) {
  return { success: false as const, error, metadata: { timestamp: new Date().toISOString(), requestId } };
}

export function sendEnvelopedError(res: Response, error: WireError): void {
  const requestId = String(res.locals.requestId ?? '');
  res.status(httpStatusFor(error.code)).json(errorEnvelope(error, requestId));
}
