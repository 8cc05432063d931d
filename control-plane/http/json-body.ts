import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import type { WireError } from '../errors/coerce-error.ts';

/** Thrown while reading a body whose bytes are not the UTF-8 they claim to be (see body-read-errors.ts). */
export const INVALID_UTF8 = 'entity.invalid.utf8';

/**
 * Refuses a UTF-8 body that is not valid UTF-8. Decoding alone would replace each bad byte with
 * U+FFFD without a word, so two different passwords made of bad bytes would become the same one,
 * and a name would be stored other than it was sent.
 */
function refuseInvalidUtf8(_req: IncomingMessage, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding === 'utf-8' && !isUtf8(body)) throw Object.assign(new Error('The request body is not valid UTF-8'), { type: INVALID_UTF8 });
}

/** Methods whose body means nothing to the API: their input travels in the path and query. */
const BODILESS_METHODS = new Set(['GET', 'HEAD', 'DELETE']);

/** Whether the API reads a body sent with this method (trpc-to-openapi takes GET and DELETE input from the query). */
export function readsBody(method: string): boolean {
  return !BODILESS_METHODS.has(method);
}

/**
 * Reads a JSON request body (express.json) up to `limit` bytes, refusing bytes that are not valid
 * UTF-8. A GET, HEAD or DELETE is passed on unread: its input is in the path and query, so a body
 * it carries is not parsed, limited or refused — it is not looked at.
 */
export function jsonBody(options: { limit: number; type?: (req: IncomingMessage) => boolean }): RequestHandler {
  const read = express.json({ limit: options.limit, verify: refuseInvalidUtf8, ...(options.type ? { type: options.type } : {}) });
  return (req, res, next) => (readsBody(req.method) ? read(req, res, next) : next());
}

/** What a body of another media type answers, on either surface. */
export function unsupportedContentType(contentType: string): WireError {
  return { code: 'UNSUPPORTED_MEDIA_TYPE', message: `Content-Type ${JSON.stringify(contentType)} is not supported: send application/json` };
}
