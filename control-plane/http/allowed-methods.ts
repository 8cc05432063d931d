import { getPathRegExp, normalizePath, type OpenAPIObject } from 'trpc-to-openapi';
import type { WireError } from '../errors/coerce-error.ts';
import { operationsOf } from './openapi-document.ts';

/** A method refused on a path the surface has, and the `Allow` header its answer carries. */
export type MethodRefusal = { allow: string; error: WireError };

/**
 * Refuses a method a known path does not take (`DELETE /api/me`, `POST /api/downloads/<token>`)
 * with 405 and the methods it does take (RFC 9110 §15.5.6), rather than NOT_FOUND for a resource
 * that is there, or a 415 about a body the path would never read. Read from the OpenAPI document,
 * the contract that lists each path's methods (plus `extraPaths`, served beside it); HEAD goes
 * wherever GET does. A path no template matches is left to the router (NOT_FOUND).
 */
export function methodRefusal(document: OpenAPIObject, extraPaths: Record<string, string[]> = {}): (method: string, path: string) => MethodRefusal | undefined {
  const methodsByTemplate = new Map(Object.entries(extraPaths));
  for (const { method, template } of operationsOf(document)) methodsByTemplate.set(template, [...(methodsByTemplate.get(template) ?? []), method]);
  const routes = [...methodsByTemplate].map(([template, methods]) => ({ pattern: getPathRegExp(normalizePath(template)), methods }));
  return (method, path) => {
    // Matched as the REST router matches it (trpc-to-openapi's own path helpers).
    const routed = normalizePath(path);
    // Where two templates match (`/{orgId}/kits/executions`, `/{orgId}/kits/{kitId}`), either's methods pass.
    const allowed = new Set(routes.filter((route) => route.pattern.test(routed)).flatMap((route) => route.methods));
    if (allowed.size === 0 || allowed.has(method === 'HEAD' ? 'GET' : method)) return undefined;
    if (allowed.has('GET')) allowed.add('HEAD');
    const allow = [...allowed].sort().join(', ');
    return { allow, error: { code: 'METHOD_NOT_ALLOWED', message: `${method} is not a method of this path; it takes ${allow}` } };
  };
}
