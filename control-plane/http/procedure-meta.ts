import type { AnyRouter } from '@trpc/server';

/** Procedure path → the HTTP status its REST projection answers with on success (201, 202 …). */
export function successStatusByProcedurePath(router: AnyRouter): Map<string, number> {
  const statuses = new Map<string, number>();
  for (const [path, procedure] of Object.entries(router._def.procedures)) {
    const meta = (procedure as { _def: { meta?: { successStatus?: number } } })._def.meta;
    if (meta?.successStatus) statuses.set(path, meta.successStatus);
  }
  return statuses;
}
