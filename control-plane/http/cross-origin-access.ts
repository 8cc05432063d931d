import cors from 'cors';
import type { RequestHandler } from 'express';
import type { Config } from '../config.ts';

/** What a browser script may send cross-origin besides the CORS-safelisted headers. */
const REQUEST_HEADERS = ['Authorization', 'X-API-Key', 'Content-Type', 'X-Tenant-ID', 'X-Request-ID', 'Range', 'If-Range'];

/** What a browser script may read of an answer besides the CORS-safelisted headers. */
const RESPONSE_HEADERS = [
  'X-Request-ID',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Allow',
  // A 401's challenge (RFC 9110 §15.5.2), which the API document lists among a 401's headers.
  'WWW-Authenticate',
  'Content-Disposition',
  'Content-Range',
  'Accept-Ranges',
  'ETag',
  'Digest',
];

/** How long a browser may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for the API surfaces (`cors`), when CORS_ALLOWED_ORIGINS names any origin; otherwise none,
 * and a browser keeps other sites' scripts out as it does for any server that says nothing.
 *
 * A preflight (OPTIONS) from an allowed origin is answered 204 here, before authentication and rate
 * counting: a browser sends it without the caller's credentials, so it names no caller to count.
 * Every other answer to an allowed origin — refusals included, so a script can read the error —
 * carries Access-Control-Allow-Origin and the headers it may read. No credentials mode: the API
 * takes its credentials from headers a script sets, never from cookies, so a page can spend only
 * credentials it was given. An origin not allowed, or a request without an Origin, gets no CORS
 * headers and its OPTIONS goes on as any does (405 on /api).
 */
export function crossOriginAccess(config: Pick<Config, 'corsAllowedOrigins' | 'e2eTestMode'>): RequestHandler | undefined {
  const origins = config.corsAllowedOrigins;
  if (origins !== '*' && origins.length === 0) return undefined;
  const allows = (origin: string) => origins === '*' || origins.includes(origin);
  return cors({
    // Decided per request, so a request without an Origin (not from a browser script) or from an
    // origin not allowed passes by untouched: a preflight of theirs is not answered here.
    origin: (origin, answer) => answer(null, origin !== undefined && allows(origin) ? (origins === '*' ? '*' : origin) : false),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: config.e2eTestMode ? [...REQUEST_HEADERS, 'X-E2E-Test-Mode'] : REQUEST_HEADERS,
    exposedHeaders: RESPONSE_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
  });
}
