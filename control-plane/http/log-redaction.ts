/**
 * Some secrets travel in URLs (an invitation token and a signed download link are path segments,
 * and tRPC GETs carry their input in the query string), and a caller may put any secret in a query
 * by mistake (`GET /trpc/auth.login?input={…password…}` routes nowhere but still reaches the log).
 * Request log lines pass through here, so neither a URL nor a header takes a secret into the log:
 *
 * - the token segment of a secret-carrying path is blanked (routing ignores case, so the patterns do too);
 * - anywhere else in a path, whatever is shaped like a secret the service issues is blanked: a
 *   caller who pastes one where an id belongs reaches no route that reads it, but is logged all the same;
 * - a tRPC call's query string, which holds its input, is dropped whatever the procedure;
 * - a REST query keeps the parameters the API declares (`status`, `limit`, …) and blanks every
 *   other pair, name and value;
 * - a header keeps its value only when it is one known to carry nothing secret (see below).
 */
import { decodeOrKeep } from './decode-or-keep.ts';
import { isTrpcPath } from './trpc-path.ts';

/**
 * Routes whose path carries a secret after their name, with the segments after it that are not
 * secret (the route's verbs). Every other segment after the name is blanked, however the path is
 * spelled: `//<token>` routes nowhere but still carries a token that works.
 */
const secretRoutes: RegExp = /(\/(?:customer-invitations|downloads))((?:\/[^/]*)+)/gi;
const verbsAfterSecret = new Set(['accept', 'revoke']);

/**
 * Secrets by their shape, for those pasted where an id belongs (`DELETE /api/developer/api-keys/`
 * followed by the key itself rather than its id, a misspelt invitation route): an API key
 * (`swk_<prefix>_<secret>`), a JWT (a session or identity-provider token: three base64url parts,
 * the first a JSON header), and a run of 43 or more base64url characters mixing upper case, lower
 * case and digits (32 random bytes, as an invitation token is). The ids the API names — uuids, kit
 * and output ids, slugs — are never such a run.
 */
const keyOrJwtShape = /swk_[A-Za-z0-9_-]+|eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
const longRun = /[A-Za-z0-9_-]{43,}/g;
const looksRandom = (run: string) => /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run);

const REDACTED = '[redacted]';

export function redactUrl(url: string, declaredQueryNames: ReadonlySet<string>): string {
  const queryStart = url.indexOf('?');
  const path = blankTokenShapes(blankSecretSegments(asRouted(queryStart === -1 ? url : url.slice(0, queryStart))));
  if (queryStart === -1) return path;
  if (isTrpcPath(path)) return `${path}?${REDACTED}`;
  return `${path}?${redactQuery(url.slice(queryStart + 1), declaredQueryNames)}`;
}

/**
 * A path as the routers read it, so the patterns above see what routing sees: backslashes as
 * slashes and dot segments resolved (WHATWG URL parsing, as the REST adapter parses), then each
 * segment percent-decoded on its own, so one malformed escape cannot keep the rest encoded
 * (`/customer-invitation%73\<token>` is the invitation route to the adapter, and is logged as one).
 */
function asRouted(path: string): string {
  let resolved = path;
  try {
    resolved = new URL(path, 'http://localhost').pathname;
  } catch {
    // Not parseable as a URL path: blanked as written.
  }
  return resolved.split('/').map(decodeOrKeep).join('/');
}

function blankSecretSegments(url: string): string {
  return url.replace(secretRoutes, (_match, route: string, rest: string) => {
    const segments = rest.split('/').map((segment) => (segment === '' || segment === '.' || segment === '..' || verbsAfterSecret.has(segment.toLowerCase()) ? segment : REDACTED));
    return route + segments.join('/');
  });
}

/** Whether `value` holds anything shaped like a secret the service issues (see keyOrJwtShape). */
export function holdsSecretShape(value: string): boolean {
  return blankTokenShapes(value) !== value;
}

function blankTokenShapes(path: string): string {
  return path.replace(keyOrJwtShape, REDACTED).replace(longRun, (run) => (looksRandom(run) ? REDACTED : run));
}

/**
 * `status=active&password=x&swk_…` → `status=active&[redacted]&[redacted]`: a declared parameter is
 * kept as sent; any other pair is blanked whole, its name too (a key pasted as `?swk_…` is all name).
 */
function redactQuery(query: string, declaredQueryNames: ReadonlySet<string>): string {
  return query
    .split('&')
    .map((pair) => {
      if (pair === '') return pair;
      const separator = pair.indexOf('=');
      const rawName = separator === -1 ? pair : pair.slice(0, separator);
      return declaredQueryNames.has(decodeOrKeep(rawName.replaceAll('+', ' '))) ? pair : REDACTED;
    })
    .join('&');
}

/**
 * Request headers whose values are logged. Every other header is logged by name with its value
 * blanked: a credential can travel in any header (`Proxy-Authorization`, `X-Auth-Token`, a cookie,
 * a page address holding an invitation link), and a list of the ones to hide is never complete.
 */
const loggedHeaderValues = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'connection',
  'content-encoding',
  'content-length',
  'content-type',
  'expect',
  'forwarded',
  'host',
  'origin',
  'traceparent',
  'tracestate',
  'transfer-encoding',
  'user-agent',
  'x-e2e-test-mode',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-request-id',
  'x-tenant-id',
]);

function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  // Even a header that carries nothing secret may have had a secret pasted into it (a key sent as
  // X-Request-ID or X-Tenant-ID): whatever is shaped like one is blanked there too.
  const logged = (value: unknown) => (typeof value === 'string' ? blankTokenShapes(value) : value);
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, loggedHeaderValues.has(name) ? logged(value) : REDACTED]));
}

interface SerializedRequest {
  url?: string;
  query?: unknown;
  params?: unknown;
  headers?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * pino-http's request serializer (it receives the standard serializer's output), for an API whose
 * REST operations declare `declaredQueryNames` as query parameters: headers other than the few
 * known to carry nothing secret are blanked, and so is anything secret in the URL.
 */
export function requestLogSerializer(declaredQueryNames: ReadonlySet<string>) {
  return (req: SerializedRequest): SerializedRequest => {
    // A new object: the standard serializer hands over the request's own headers.
    const logged = req.headers ? { ...req, headers: redactHeaders(req.headers) } : { ...req };
    if (typeof req.url !== 'string') return logged;
    const url = redactUrl(req.url, declaredQueryNames);
    if (url === req.url) return logged;
    // The parsed query and path parameters of such a request may repeat the secret: leave them out.
    return { ...logged, url, query: REDACTED, params: REDACTED };
  };
}
