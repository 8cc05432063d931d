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
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true, loadSchema: undefined });
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
    validate = ajv.compile(schema as object);
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
