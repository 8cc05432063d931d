/**
 * JSON Schemas that kits ship for their json/yaml outputs, compiled with ajv (2020-12 + formats).
 * One ajv instance per kit version: `$id`s from different kits never collide, and a kit version's
 * compiled validators are cached for as long as the runtime keeps the version warm.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule.default;

// ajv treats schemas as code it trusts; kit schemas are tenant data, so keep them small and
// shallow (deep schemas can overflow ajv's compiler stack, huge ones make compiling slow).
export const MAX_SCHEMA_DEPTH = 64;
export const MAX_SCHEMA_BYTES = 512 * 1024;

export type OutputSchemaValidator = (value: unknown) => string[];

export function createKitAjv(): Ajv2020 {
  // logger: false — ajv would print "unknown format ignored" to the worker's console; unknown
  // formats are documented as ignored instead.
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true, loadSchema: undefined, logger: false });
  addFormats(ajv);
  return ajv;
}

/** Parses and compiles one schema file; throws an Error whose message says what is wrong. */
export function compileOutputSchema(ajv: Ajv2020, source: string): OutputSchemaValidator {
  if (Buffer.byteLength(source, 'utf8') > MAX_SCHEMA_BYTES) {
    throw new Error(`schema is larger than ${MAX_SCHEMA_BYTES} bytes`);
  }
  let schema: unknown;
  try {
    schema = JSON.parse(source);
  } catch (error) {
    throw new Error(`not valid JSON: ${(error as Error).message}`);
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    if (typeof schema !== 'boolean') throw new Error('a JSON Schema must be an object or a boolean');
  }
  if (jsonDepth(schema) > MAX_SCHEMA_DEPTH) throw new Error(`schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(resolveStaticDynamicRefs(schema) as object);
  } catch (error) {
    throw new Error(`not a valid JSON Schema: ${(error as Error).message}`);
  }
  return (value) => (validate(value) ? [] : formatAjvErrors(validate.errors ?? []));
}

export function formatAjvErrors(errors: readonly ErrorObject[]): string[] {
  return errors.map((error) => {
    const at = error.instancePath === '' ? '(root)' : error.instancePath;
    const detail = error.keyword === 'additionalProperties' ? ` "${String(error.params.additionalProperty)}"` : '';
    return `${at}: ${error.message ?? error.keyword}${detail}`;
  });
}

/**
 * ajv resolves `$dynamicRef` wrongly in schemas such as the official OpenAPI 3.1 schema (its
 * Schema Objects end up checked against an unrelated subschema). A kit schema is compiled on its
 * own, so no other schema resource can take part in the dynamic scope: when an anchor is declared
 * exactly once in the document and no nested `$id` opens another resource, the dynamic reference
 * resolves to that declaration, and an ordinary `$ref` to it means the same thing.
 */
export function resolveStaticDynamicRefs(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const anchors = new Map<string, string[]>();
  let nestedResource = false;
  let dynamicRefs = 0;
  const visit = (node: unknown, pointer: string, isRoot: boolean): void => {
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (!Array.isArray(node)) {
      if (!isRoot && typeof record.$id === 'string') nestedResource = true;
      if (typeof record.$dynamicAnchor === 'string') anchors.set(record.$dynamicAnchor, [...(anchors.get(record.$dynamicAnchor) ?? []), pointer]);
      if (typeof record.$dynamicRef === 'string') dynamicRefs++;
    }
    for (const [key, child] of Object.entries(record)) visit(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, false);
  };
  visit(schema, '', true);
  if (dynamicRefs === 0 || nestedResource) return schema;
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (typeof node !== 'object' || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      const target = key === '$dynamicRef' && typeof value === 'string' && value.startsWith('#') ? anchors.get(value.slice(1)) : undefined;
      if (target?.length === 1) out.$ref = `#${(target[0] as string).split('/').map(encodeURIComponent).join('/')}`;
      else out[key] = rewrite(value);
    }
    return out;
  };
  return rewrite(schema);
}

function jsonDepth(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth > deepest) deepest = depth;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}
