/**
 * Some secrets travel in URLs (an invitation token and a signed download link are path segments,
 * and tRPC GETs carry their input in the query string). Request log lines pass through here, so a
 * URL never takes a secret into the log. Add a pattern when a new route carries one. Routing
 * ignores case, so the patterns do too.
 */
import { decodeOrKeep } from './decode-or-keep.ts';
import { trpcProceduresOf } from './trpc-path.ts';

const secretPathSegments: RegExp[] = [/(\/customer-invitations\/)[^/?#]+/gi, /(\/downloads\/)[^/?#]+/gi];

/** tRPC procedures whose input holds a secret: their query string is dropped from the log. */
const secretTrpcProcedures = ['customerInvitations.'];

export function redactUrl(url: string): string {
  // A percent-encoded route name (`/customer-invitation%73/<token>`) hides the pattern but not the
  // token: such a URL is logged decoded, with the secret blanked.
  let redacted = blankSecretSegments(url);
  const decoded = decodeOrKeep(redacted);
  const blankedDecoded = blankSecretSegments(decoded);
  if (blankedDecoded !== decoded) redacted = blankedDecoded;
  const [path = '', query] = redacted.split('?', 2);
  // tRPC decodes its path before finding procedures: `customerInvitations%2Eget` is the same one.
  const procedures = trpcProceduresOf(decodeOrKeep(path));
  if (query !== undefined && procedures !== null && secretTrpcProcedures.some((name) => procedures.includes(name))) {
    return `${path}?[redacted]`;
  }
  return redacted;
}

function blankSecretSegments(url: string): string {
  return secretPathSegments.reduce((text, pattern) => text.replace(pattern, '$1[redacted]'), url);
}


interface SerializedRequest {
  url?: string;
  query?: unknown;
  params?: unknown;
  [key: string]: unknown;
}

/** pino-http request serializer (it receives the standard serializer's output). */
export function redactRequestForLog(req: SerializedRequest): SerializedRequest {
  if (typeof req.url !== 'string') return req;
  const url = redactUrl(req.url);
  if (url === req.url) return req;
  // Path parameters and parsed query of such a route may repeat the secret: leave them out.
  return { ...req, url, query: '[redacted]', params: '[redacted]' };
}
