/**
 * Some secrets travel in URLs (an invitation token and a signed download link are path segments,
 * and tRPC GETs carry their input in the query string), and a caller may put any secret in a query
 * by mistake (`GET /trpc/auth.login?input={…password…}` routes nowhere but still reaches the log).
 * Request log lines pass through here, so a URL never takes a secret into the log:
 *
 * - the token segment of a secret-carrying path is blanked (routing ignores case, so the patterns do too);
 * - a tRPC call's query string, which holds its input, is dropped whatever the procedure;
 * - a REST query keeps the parameters the API declares (`status`, `limit`, …) and blanks every
 *   other pair, name and value.
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

const REDACTED = '[redacted]';

export function redactUrl(url: string, declaredQueryNames: ReadonlySet<string>): string {
  const queryStart = url.indexOf('?');
  const path = blankSecretSegments(asRouted(queryStart === -1 ? url : url.slice(0, queryStart)));
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

interface SerializedRequest {
  url?: string;
  query?: unknown;
  params?: unknown;
  [key: string]: unknown;
}

/**
 * pino-http's request serializer (it receives the standard serializer's output), for an API whose
 * REST operations declare `declaredQueryNames` as query parameters.
 */
export function requestLogSerializer(declaredQueryNames: ReadonlySet<string>) {
  return (req: SerializedRequest): SerializedRequest => {
    if (typeof req.url !== 'string') return req;
    const url = redactUrl(req.url, declaredQueryNames);
    if (url === req.url) return req;
    // The parsed query and path parameters of such a request may repeat the secret: leave them out.
    return { ...req, url, query: REDACTED, params: REDACTED };
  };
}
