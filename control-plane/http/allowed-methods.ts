import type { OpenAPIObject } from 'trpc-to-openapi';
import type { WireError } from '../errors/coerce-error.ts';
import { operationsOf } from './openapi-document.ts';
import { operationsAtPath } from './operations-at-path.ts';

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
  const served = Object.entries(extraPaths).flatMap(([template, methods]) => methods.map((method) => ({ method, template, queryNames: new Set<string>(), listNames: new Set<string>() })));
  const operationsAt = operationsAtPath([...operationsOf(document), ...served]);
  return (method, path) => {
    const allowed = new Set(operationsAt(path).map((operation) => operation.method));
    if (allowed.size === 0 || allowed.has(method === 'HEAD' ? 'GET' : method)) return undefined;
    if (allowed.has('GET')) allowed.add('HEAD');
    const allow = [...allowed].sort().join(', ');
    return { allow, error: { code: 'METHOD_NOT_ALLOWED', message: `${method} is not a method of this path; it takes ${allow}` } };
  };
}
