import type { AnyRouter } from '@trpc/server';

type MetaOf = { _def: { meta?: { successStatus?: number; openapi?: { errorResponses?: number[] | Record<number, string> } } } };

/** Procedure path → the HTTP status its REST projection answers with on success (201, 202 …). */
export function successStatusByProcedurePath(router: AnyRouter): Map<string, number> {
  const statuses = new Map<string, number>();
  for (const [path, procedure] of Object.entries(router._def.procedures)) {
    const meta = (procedure as MetaOf)._def.meta;
    if (meta?.successStatus) statuses.set(path, meta.successStatus);
  }
  return statuses;
}

/**
 * Procedure path → the failure statuses its meta's `openapi.errorResponses` names (with their
 * descriptions, when given as a record): those it answers beyond the ones every operation of its
 * kind can answer (see openapi-document.ts).
 */
export function errorResponsesByProcedurePath(router: AnyRouter): Map<string, Map<number, string | undefined>> {
  const byPath = new Map<string, Map<number, string | undefined>>();
  for (const [path, procedure] of Object.entries(router._def.procedures)) {
    const declared = (procedure as MetaOf)._def.meta?.openapi?.errorResponses;
    if (!declared) continue;
    const entries: Array<[number, string | undefined]> = Array.isArray(declared)
      ? declared.map((status) => [status, undefined])
      : Object.entries(declared).map(([status, description]) => [Number(status), description]);
    byPath.set(path, new Map(entries));
  }
  return byPath;
}
