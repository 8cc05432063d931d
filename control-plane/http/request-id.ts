import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** What a caller's X-Request-ID may be (the OpenAPI document states it too). */
export const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-ID when it is sane (bounded length, safe charset), else a fresh uuid. */
export function requestIdFor(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && ACCEPTABLE_REQUEST_ID.test(sent) ? sent : randomUUID();
}
