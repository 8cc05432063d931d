import { getPathRegExp, normalizePath, type OpenAPIObject } from 'trpc-to-openapi';
import type { WireError } from '../errors/coerce-error.ts';
import { operationsOf } from './openapi-document.ts';

type Route = { pattern: RegExp; names: Set<string> };

/**
 * A name as the answer may repeat it: one shaped like a parameter's. Anything else (a pasted API key
 * or token, which a query's name can be as well as its value) is not echoed.
 */
function shownName(name: string): string {
  return /^[A-Za-z][A-Za-z0-9_.-]{0,31}$/.test(name) ? name : '(a name not shown)';
}

/**
 * Refuses query parameters the operation does not declare, as a body's unknown fields are: a
 * misspelt filter (`?stauts=archived`) would otherwise be dropped without a word and the answer
 * would hold everything. Read from the OpenAPI document, the contract REST callers build on. A
 * request without a query costs nothing; a path no operation matches is left to the router
 * (NOT_FOUND).
 */
export function undeclaredQueryRefusal(document: OpenAPIObject): (method: string, path: string, queryString: string) => WireError | undefined {
  const routesByMethod = new Map<string, Route[]>();
  for (const { method, template, queryNames } of operationsOf(document)) {
    routesByMethod.set(method, [...(routesByMethod.get(method) ?? []), { pattern: getPathRegExp(normalizePath(template)), names: queryNames }]);
  }
  return (method, path, queryString) => {
    if (queryString === '') return undefined;
    // Matched as the REST router matches it (trpc-to-openapi's own path helpers).
    const routed = normalizePath(path);
    const matching = (routesByMethod.get(method) ?? []).filter((route) => route.pattern.test(routed));
    if (matching.length === 0) return undefined;
    // Where two templates match (`/{orgId}/kits/executions`, `/{orgId}/kits/{kitId}`), either's names pass.
    const undeclared = [...new Set(new URLSearchParams(queryString).keys())].filter((name) => !matching.some((route) => route.names.has(name)));
    if (undeclared.length === 0) return undefined;
    const declared = [...new Set(matching.flatMap((route) => [...route.names]))];
    return {
      code: 'VALIDATION_ERROR',
      message: `The query names parameters this operation does not take (it takes ${declared.length > 0 ? declared.join(', ') : 'none'})`,
      details: { issues: undeclared.map((name) => ({ field: shownName(name), issue: 'is not a field that can be set here' })) },
    };
  };
}
