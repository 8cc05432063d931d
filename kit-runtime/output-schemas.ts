/**
 * JSON Schemas that kits ship for their json/yaml outputs, compiled with ajv (2020-12 + formats).
 * One ajv instance per kit version: `$id`s from different kits never collide, and a kit version's
 * compiled validators are cached for as long as the runtime keeps the version warm.
 *
 * Validation runs on the host, outside the isolate's time limit, so a schema's `pattern`s and
 * `patternProperties` run on RE2 (re2js), whose matching time is linear in the input, instead of
 * V8's backtracking engine, where `^(a+)+$` takes hours on forty characters.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { RegExpEngine, RegExpLike } from 'ajv/dist/types/index.js';
import addFormatsModule from 'ajv-formats';
import { RE2JS } from 're2js';
import { nestsDeeperThan } from './json-depth.ts';
import { useLinearUniqueItems } from './unique-items.ts';

const addFormats = addFormatsModule.default;

// ajv treats schemas as code it trusts; kit schemas are tenant data, so keep them small and
// shallow (deep schemas can overflow ajv's compiler stack, huge ones make compiling slow).
export const MAX_SCHEMA_DEPTH = 64;
export const MAX_SCHEMA_BYTES = 512 * 1024;
// Linear is not free: RE2 matches in (string length × program size) steps. Compiling costs about
// one step per instruction, so one schema's patterns may compile to this many instructions …
export const MAX_SCHEMA_PATTERN_INSTRUCTIONS = 100_000;
// … and checking one output may take this many steps (a second or two at worst, milliseconds usually),
export const MAX_PATTERN_STEPS_PER_OUTPUT = 20_000_000;
// … and all the outputs of one run this many (up to 500 outputs would otherwise mean minutes).
export const MAX_PATTERN_STEPS_PER_RUN = 60_000_000;

export type OutputSchemaValidator = (value: unknown) => string[];

export function createKitAjv(): Ajv2020 {
  // logger: false — ajv would print "unknown format ignored" to the worker's console; unknown
  // formats are documented as ignored instead.
  // allowMatchingProperties: strict mode would otherwise test patternProperties against property
  // names with V8's RegExp while compiling.
  // ownProperties: without it ajv tests `prop in data`, so what every object inherits (`constructor`,
  // `toString`, `__proto__`) counts as present: `required: ["constructor"]` would hold for `{}`, and
  // `properties.constructor` would check Object against its subschema.
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    allowMatchingProperties: true,
    ownProperties: true,
    validateFormats: true,
    loadSchema: undefined,
    logger: false,
    code: { regExp: createLinearRegExpEngine() },
  });
  addFormats(ajv);
  useLinearUniqueItems(ajv);
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
  if (nestsDeeperThan(schema, MAX_SCHEMA_DEPTH)) throw new Error(`schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
  let validate: ValidateFunction;
  budget.instructionsLeft = MAX_SCHEMA_PATTERN_INSTRUCTIONS;
  try {
    validate = ajv.compile(resolveStaticDynamicRefs(schema) as object);
  } catch (error) {
    if (error instanceof UnsupportedPatternError) throw error;
    throw new Error(`not a valid JSON Schema: ${(error as Error).message}`);
  } finally {
    budget.instructionsLeft = Infinity;
  }
  return (value) => {
    budget.stepsLeft = MAX_PATTERN_STEPS_PER_OUTPUT;
    try {
      return validate(value) ? [] : formatAjvErrors(validate.errors ?? []);
    } finally {
      budget.stepsLeft = Infinity;
    }
  };
}

export class UnsupportedPatternError extends Error {}

// Compiling and validating are synchronous, so one meter serves every ajv instance; outside
// compileOutputSchema and its validators nothing is metered.
const budget = { instructionsLeft: Infinity, stepsLeft: Infinity, runStepsLeft: Infinity, runLimit: Infinity };

/**
 * Checks a run's outputs under one shared pattern budget. `check` must be synchronous (validation
 * is), so no other run's checks interleave with it.
 */
export function meterPatternsForRun<T>(check: () => T, maxSteps = MAX_PATTERN_STEPS_PER_RUN): T {
  budget.runStepsLeft = maxSteps;
  budget.runLimit = maxSteps;
  try {
    return check();
  } finally {
    budget.runStepsLeft = Infinity;
    budget.runLimit = Infinity;
  }
}

/**
 * ajv's `code.regExp` hook: JSON Schema patterns are ECMA-262 regular expressions, so a pattern
 * must parse as one (with the `u` flag, as ajv uses it) and then compile as RE2 after re2js's
 * JavaScript-to-RE2 translation. What RE2 cannot do in linear time (lookaround, backreferences)
 * is refused, and so the kit is refused at publish.
 */
function createLinearRegExpEngine(): RegExpEngine {
  const compiled = new Map<string, RegExpLike>();
  const engine = (pattern: string): RegExpLike => {
    let regExp = compiled.get(pattern);
    if (!regExp) compiled.set(pattern, (regExp = compileLinearRegExp(pattern)));
    return regExp;
  };
  // Only ajv's standalone code generation reads `code`; kits never use it.
  return Object.assign(engine, { code: 'kitLinearRegExp' });
}

function compileLinearRegExp(pattern: string): RegExpLike {
  const refuse = (reason: string): never => {
    throw new UnsupportedPatternError(`pattern "${pattern}" ${reason}`);
  };
  try {
    new RegExp(pattern, 'u'); // parses only; V8 compiles a RegExp on its first match
  } catch (error) {
    refuse(`is not an ECMA-262 regular expression: ${(error as Error).message}`);
  }
  // With the u flag \1-\9 and \k are only ever backreferences, which re2js would read as literals.
  if (/\\[1-9k]/.test(pattern.replace(/\\\\/g, ''))) refuse('uses a backreference, which RE2 does not support');
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    return refuse(`is not supported by RE2, the linear-time engine that checks outputs: ${(error as Error).message}`);
  }
  const size = re.programSize();
  if (size > budget.instructionsLeft) {
    refuse(`makes the schema's patterns larger than ${MAX_SCHEMA_PATTERN_INSTRUCTIONS} RE2 instructions`);
  }
  budget.instructionsLeft -= size;
  return new LinearRegExp(pattern, re, size);
}

class LinearRegExp implements RegExpLike {
  readonly pattern: string;
  readonly re: RE2JS;
  readonly size: number;

  constructor(pattern: string, re: RE2JS, size: number) {
    this.pattern = pattern;
    this.re = re;
    this.size = size;
  }

  test(input: string): boolean {
    const steps = (input.length + 1) * this.size;
    if (steps > budget.stepsLeft) {
      throw new Error(`checking pattern "${this.pattern}" against a string of ${input.length} characters would exceed ${MAX_PATTERN_STEPS_PER_OUTPUT} steps of pattern matching for one output`);
    }
    if (steps > budget.runStepsLeft) {
      throw new Error(`checking pattern "${this.pattern}" against a string of ${input.length} characters would exceed the ${budget.runLimit} steps of pattern matching for the run`);
    }
    budget.stepsLeft -= steps;
    budget.runStepsLeft -= steps;
    return this.re.test(input);
  }

  /** ajv keys compiled patterns by this. */
  toString(): string {
    return `/${this.pattern}/u`;
  }
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
