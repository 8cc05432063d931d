import type { AnyRouter } from '@trpc/server';

type MetaOf = { _def: { meta?: { successStatus?: number; credentialsOptional?: true; openapi?: { path?: string; errorResponses?: number[] | Record<number, string> } } } };

/** Procedure path → the HTTP status its REST projection answers with on success (201, 202 …). */
export function successStatusByProcedurePath(router: AnyRouter): Map<string, number> {
  const statuses = new Map<string, number>();
  for (const [path, procedure] of Object.entries(router._def.procedures)) {
    const meta = (procedure as MetaOf)._def.meta;
    if (meta?.successStatus) statuses.set(path, meta.successStatus);
  }
  return statuses;
}

/** Procedure paths that take credentials optionally (`credentialsOptional` in their meta). */
export function credentialsOptionalProcedurePaths(router: AnyRouter): Set<string> {
  return new Set(Object.entries(router._def.procedures).flatMap(([path, procedure]) => ((procedure as MetaOf)._def.meta?.credentialsOptional ? [path] : [])));
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

type ZodInternals = { _zod?: { def?: { type?: string; catchall?: ZodInternals } } };
type InputsOf = { _def: { inputs?: Array<ZodInternals & { safeParse(value: unknown): { success: boolean } }> } };

/**
 * Procedure paths whose input is a strict object (unknown fields refused). trpc-to-openapi rebuilds
 * a refined object's body schema from its shape, which loses the strictness; the document puts it back.
 */
export function strictInputProcedurePaths(router: AnyRouter): Set<string> {
  const strict = new Set<string>();
  for (const [path, procedure] of Object.entries(router._def.procedures)) {
    const inputs = (procedure as InputsOf)._def.inputs ?? [];
    const def = inputs.length === 1 ? inputs[0]?._zod?.def : undefined;
    if (def?.type === 'object' && def.catchall?._zod?.def?.type === 'never') strict.add(path);
  }
  return strict;
}

/**
 * A value every path parameter of the API takes (a uuid, a token, a kit id). Should one not take
 * it, its input does not parse and its body stays documented as required (the generator's default).
 */
const ANY_PATH_VALUE = '00000000-0000-0000-0000-000000000000';

/**
 * Procedure paths whose REST body may be left out: their input parses with its path parameters
 * alone. A POST, PUT or PATCH without a body means "no fields", so for these (every field
 * optional: a PATCH, a rotation) it succeeds, and the document must not call the body required.
 */
export function bodyOptionalProcedurePaths(router: AnyRouter): Set<string> {
  const optional = new Set<string>();
  for (const [path, procedure] of Object.entries(router._def.procedures)) {
    const { inputs = [], meta } = (procedure as InputsOf & MetaOf)._def;
    if (inputs.length !== 1 || !meta?.openapi?.path) continue;
    const pathOnly = Object.fromEntries([...meta.openapi.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name, ANY_PATH_VALUE]));
    if (inputs[0]!.safeParse(pathOnly).success) optional.add(path);
  }
  return optional;
}

type FieldInternals = { _zod?: { def?: { type?: string; defaultValue?: unknown } } };
type InputInternals = { _zod?: { def?: { type?: string; shape?: Record<string, FieldInternals>; innerType?: InputInternals } } };
type ObjectInputsOf = { _def: { inputs?: InputInternals[] } };

/** The object inside an input that may be left out whole (`.prefault({})`, `.optional()`). */
function objectDefOf(input: InputInternals | undefined) {
  let def = input?._zod?.def;
  while (def && ['prefault', 'default', 'optional'].includes(def.type ?? '')) def = def.innerType?._zod?.def;
  return def?.type === 'object' ? def : undefined;
}

/**
 * Procedure path → the defaults of its input's fields (`limit` 50, `offset` 0). The generator drops
 * a default it cannot see through a preprocessing step (`queryInteger`); the document puts it back,
 * so a caller reads what leaving a parameter out means.
 */
export function inputDefaultsByProcedurePath(router: AnyRouter): Map<string, Record<string, unknown>> {
  const byPath = new Map<string, Record<string, unknown>>();
  for (const [path, procedure] of Object.entries(router._def.procedures)) {
    const inputs = (procedure as ObjectInputsOf)._def.inputs ?? [];
    const def = inputs.length === 1 ? objectDefOf(inputs[0]) : undefined;
    if (!def?.shape) continue;
    const defaults = Object.entries(def.shape).flatMap(([name, field]) => (field._zod?.def?.type === 'default' ? [[name, field._zod.def.defaultValue] as const] : []));
    if (defaults.length > 0) byPath.set(path, Object.fromEntries(defaults));
  }
  return byPath;
}
