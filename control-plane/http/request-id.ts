import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { holdsSecretShape } from './log-redaction.ts';

/** What a caller's X-Request-ID may be (the OpenAPI document states it too). */
export const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The caller's X-Request-ID when it is sane (bounded length, safe charset) and not shaped like a
 * secret the service issues (an API key, a JWT, a long random run: a key pasted into the wrong
 * header would otherwise be echoed and written on every log line of the request), else a fresh uuid.
 */
export function requestIdFor(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && ACCEPTABLE_REQUEST_ID.test(sent) && !holdsSecretShape(sent) ? sent : randomUUID();
}
