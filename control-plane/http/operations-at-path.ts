import { getPathRegExp, normalizePath } from 'trpc-to-openapi';
import type { DocumentOperation } from './openapi-document.ts';

/**
 * The operations whose path template matches a request's path, matched as the REST router matches
 * it (trpc-to-openapi's own path helpers), each template's pattern made once. Where two templates
 * match (`/{orgId}/kits/executions`, `/{orgId}/kits/{kitId}`), the operations of both.
 */
export function operationsAtPath(operations: readonly DocumentOperation[]): (path: string) => DocumentOperation[] {
  const byTemplate = new Map<string, DocumentOperation[]>();
  for (const operation of operations) byTemplate.set(operation.template, [...(byTemplate.get(operation.template) ?? []), operation]);
  const routes = [...byTemplate].map(([template, atTemplate]) => ({ pattern: getPathRegExp(normalizePath(template)), operations: atTemplate }));
  return (path) => {
    const routed = normalizePath(path);
    return routes.filter((route) => route.pattern.test(routed)).flatMap((route) => route.operations);
  };
}
