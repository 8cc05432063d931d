import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

/**
 * Helmet's defaults, for every answer: no type sniffing, no framing by other sites, and a content
 * security policy under which the docs page runs only its own scripts. Except the policy's
 * upgrade-insecure-requests: the service is often reached over plain HTTP (npm start, behind a
 * proxy that ends TLS elsewhere), where it made browsers fetch the docs page's assets by https.
 */
export const securityHeaders = helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } });

/** Sets the security headers on a response the HTTP server answers before express sees the request. */
export function setSecurityHeaders(req: IncomingMessage, res: ServerResponse): void {
  securityHeaders(req, res, () => {});
}

/**
 * The same headers as `Name: value` lines, for an answer written to the socket by hand (the parser
 * gave up: there is no request or response object). Helmet's values do not depend on the request.
 */
export const securityHeaderLines: readonly string[] = (() => {
  const lines: string[] = [];
  const collector = { setHeader: (name: string, value: string) => void lines.push(`${name}: ${value}`), removeHeader: () => {} };
  securityHeaders({} as IncomingMessage, collector as unknown as ServerResponse, () => {});
  return lines;
})();
