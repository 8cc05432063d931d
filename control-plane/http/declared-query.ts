import type { OpenAPIObject } from 'trpc-to-openapi';
import type { WireError } from '../errors/coerce-error.ts';

type Route = { method: string; pattern: RegExp; names: Set<string> };

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** `/projects/{projectId}` as a pattern over the path the REST router sees (any letter case, a trailing slash allowed). */
function patternOf(template: string): RegExp {
  const escaped = template.split(/\{[^}]+\}/).map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('[^/]+')}/?$`, 'i');
}

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
 * path no operation matches is left to the router (NOT_FOUND).
 */
export function undeclaredQueryRefusal(document: OpenAPIObject): (method: string, path: string, query: URLSearchParams) => WireError | undefined {
  const routes: Route[] = [];
  for (const [template, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const names = new Set((operation.parameters ?? []).flatMap((parameter) => ('in' in parameter && parameter.in === 'query' ? [parameter.name] : [])));
      routes.push({ method: method.toUpperCase(), pattern: patternOf(template), names });
    }
  }
  return (method, path, query) => {
    const matching = routes.filter((route) => route.method === method && route.pattern.test(path));
    if (matching.length === 0) return undefined;
    // Where two templates match (`/{orgId}/kits/executions`, `/{orgId}/kits/{kitId}`), either's names pass.
    const undeclared = [...new Set(query.keys())].filter((name) => !matching.some((route) => route.names.has(name)));
    if (undeclared.length === 0) return undefined;
    const declared = [...new Set(matching.flatMap((route) => [...route.names]))];
    return {
      code: 'VALIDATION_ERROR',
      message: `The query names parameters this operation does not take (it takes ${declared.length > 0 ? declared.join(', ') : 'none'})`,
      details: { issues: undeclared.map((name) => ({ field: shownName(name), issue: 'is not a field that can be set here' })) },
    };
  };
}
