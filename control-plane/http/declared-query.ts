import type { OpenAPIObject } from 'trpc-to-openapi';
import type { WireError } from '../errors/coerce-error.ts';
import { operationsOf, type DocumentOperation } from './openapi-document.ts';
import { operationsAtPath } from './operations-at-path.ts';

/**
 * A name as the answer may repeat it: one shaped like a parameter's. Anything else (a pasted API key
 * or token, which a query's name can be as well as its value) is not echoed.
 */
function shownName(name: string): string {
  return /^[A-Za-z][A-Za-z0-9_.-]{0,31}$/.test(name) ? name : '(a name not shown)';
}

/**
 * Refuses a query the operation does not declare, as a body's unknown fields are: a parameter it
 * does not take (a misspelt filter, `?stauts=archived`, would otherwise be dropped without a word
 * and the answer would hold everything), and one of its single-valued parameters given more than
 * once (`?limit=1&limit=2`, `?status=active&status=archived`): the projection would hand the
 * procedure a list, refused in words about something else ("must be a whole number", "Invalid
 * option"). Read from the OpenAPI document, the contract REST callers build on. A request without a
 * query costs nothing; a path no operation matches is left to the router (NOT_FOUND).
 */
export function queryParameterRefusal(document: OpenAPIObject): (method: string, path: string, queryString: string) => WireError | undefined {
  const operationsAt = operationsAtPath(operationsOf(document));
  return (method, path, queryString) => {
    if (queryString === '') return undefined;
    const matching = operationsAt(path).filter((operation) => operation.method === method);
    if (matching.length === 0) return undefined;
    const given = [...new URLSearchParams(queryString).keys()];
    return undeclaredRefusal(given, matching) ?? repeatedRefusal(given, matching);
  };
}

function undeclaredRefusal(given: string[], matching: DocumentOperation[]): WireError | undefined {
  // Where two templates match (`/{orgId}/kits/executions`, `/{orgId}/kits/{kitId}`), either's names pass.
  const undeclared = [...new Set(given)].filter((name) => !matching.some((operation) => operation.queryNames.has(name)));
  if (undeclared.length === 0) return undefined;
  const declared = [...new Set(matching.flatMap((operation) => [...operation.queryNames]))];
  return {
    code: 'VALIDATION_ERROR',
    message: `The query names parameters this operation does not take (it takes ${declared.length > 0 ? declared.join(', ') : 'none'})`,
    details: { issues: undeclared.map((name) => ({ field: shownName(name), issue: 'is not a field that can be set here' })) },
  };
}

function repeatedRefusal(given: string[], matching: DocumentOperation[]): WireError | undefined {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const name of given) (seen.has(name) ? repeated : seen).add(name);
  const refused = [...repeated].filter((name) => !matching.some((operation) => operation.listNames.has(name)));
  if (refused.length === 0) return undefined;
  return {
    code: 'VALIDATION_ERROR',
    message: 'The query gives a parameter more than once; each takes one value',
    details: { issues: refused.map((name) => ({ field: name, issue: 'is given more than once' })) },
  };
}
