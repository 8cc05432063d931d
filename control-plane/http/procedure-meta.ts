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

/** What of a zod 4 schema's internals is read here (`_zod.def`). */
type ZodInternals = {
  _zod?: { def?: { type?: string; catchall?: ZodInternals; shape?: Record<string, ZodInternals>; innerType?: ZodInternals; defaultValue?: unknown } };
  safeParse(value: unknown): { success: boolean };
};
type InputsOf = { _def: { inputs?: ZodInternals[] } };

/** Each procedure's path and its one input schema (a procedure with none, or with several, is left out). */
function singleInputs(router: AnyRouter): Array<[path: string, input: ZodInternals, meta: MetaOf['_def']['meta']]> {
  return Object.entries(router._def.procedures).flatMap(([path, procedure]) => {
    const { inputs = [], meta } = (procedure as InputsOf & MetaOf)._def;
    return inputs.length === 1 ? [[path, inputs[0]!, meta] as [string, ZodInternals, MetaOf['_def']['meta']]] : [];
  });
}

/** The object inside an input that may be left out whole (`.prefault({})`, `.optional()`). */
function objectDefOf(input: ZodInternals) {
  let def = input._zod?.def;
  while (def && ['prefault', 'default', 'optional'].includes(def.type ?? '')) def = def.innerType?._zod?.def;
  return def?.type === 'object' ? def : undefined;
}

/**
 * Procedure paths whose input is a strict object (unknown fields refused). trpc-to-openapi rebuilds
 * a refined object's body schema from its shape, which loses the strictness; the document puts it back.
 */
export function strictInputProcedurePaths(router: AnyRouter): Set<string> {
  return new Set(singleInputs(router).flatMap(([path, input]) => (objectDefOf(input)?.catchall?._zod?.def?.type === 'never' ? [path] : [])));
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
  return new Set(
    singleInputs(router).flatMap(([path, input, meta]) => {
      if (!meta?.openapi?.path) return [];
      const pathOnly = Object.fromEntries([...meta.openapi.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name, ANY_PATH_VALUE]));
      return input.safeParse(pathOnly).success ? [path] : [];
    }),
  );
}

/**
 * Procedure path → the defaults of its input's fields (`limit` 50, `offset` 0). The generator drops
 * a default it cannot see through a preprocessing step (`queryInteger`); the document puts it back,
 * so a caller reads what leaving a parameter out means.
 */
export function inputDefaultsByProcedurePath(router: AnyRouter): Map<string, Record<string, unknown>> {
  const byPath = new Map<string, Record<string, unknown>>();
  for (const [path, input] of singleInputs(router)) {
    const shape = objectDefOf(input)?.shape ?? {};
    const defaults = Object.entries(shape).flatMap(([name, field]) => (field._zod?.def?.type === 'default' ? [[name, field._zod.def.defaultValue] as const] : []));
    if (defaults.length > 0) byPath.set(path, Object.fromEntries(defaults));
  }
  return byPath;
}
