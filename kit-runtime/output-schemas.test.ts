import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileOutputSchema, createKitAjv, MAX_PATTERN_STEPS_PER_OUTPUT, meterPatternsForRun, MAX_SCHEMA_PATTERN_INSTRUCTIONS, resolveStaticDynamicRefs } from './output-schemas.ts';

const meta = {
  $defs: {
    schema: { $dynamicAnchor: 'meta', type: ['object', 'boolean'] },
    parameter: { type: 'object', properties: { in: { type: 'string' }, schema: { $dynamicRef: '#meta' } }, required: ['in'], unevaluatedProperties: false },
  },
  type: 'object',
  properties: { parameter: { $ref: '#/$defs/parameter' } },
  unevaluatedProperties: false,
};

describe('kit output schemas', () => {
  it('resolves a $dynamicRef declared once to a plain $ref, and leaves other schemas alone', () => {
    const rewritten = resolveStaticDynamicRefs(meta) as typeof meta;
    expect(rewritten.$defs.parameter.properties.schema).toEqual({ $ref: '#/%24defs/schema' });
    const plain = { type: 'object' };
    expect(resolveStaticDynamicRefs(plain)).toBe(plain);
    const twice = { $defs: { a: { $dynamicAnchor: 'x' }, b: { $dynamicAnchor: 'x' } }, $dynamicRef: '#x' };
    expect(resolveStaticDynamicRefs(twice)).toEqual(twice);
  });

  it('validates what ajv alone gets wrong: schema-typed properties behind a $dynamicRef', () => {
    const validate = compileOutputSchema(createKitAjv(), JSON.stringify(meta));
    expect(validate({ parameter: { in: 'query', schema: { type: 'integer' } } })).toEqual([]);
    expect(validate({ parameter: { in: 'query', schema: 42 } })).toEqual(['/parameter/schema: must be object,boolean']);
    expect(validate({ parameter: { schema: true } })).toEqual(["/parameter: must have required property 'in'"]);
  });

  it('accepts a valid OpenAPI 3.1 document and rejects broken ones with the official schema', () => {
    const schema = readFileSync(new URL('../kits/openapi-api/schemas/openapi-3.1.schema.json', import.meta.url), 'utf8');
    const validate = compileOutputSchema(createKitAjv(), schema);
    const document = {
      openapi: '3.1.0',
      info: { title: 'T', version: '1' },
      paths: {
        '/things/{id}': {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } } },
        },
      },
      components: { schemas: { Thing: { type: 'object', properties: { id: { type: 'string' } } } } },
    };
    expect(validate(document)).toEqual([]);
    const badSchema = structuredClone(document) as any;
    badSchema.components.schemas.Thing = 42;
    expect(validate(badSchema)).toContain('/components/schemas/Thing: must be object,boolean');
    const noIn = structuredClone(document) as any;
    delete noIn.paths['/things/{id}'].parameters[0].in;
    expect(validate(noIn).join('\n')).toMatch(/must have required property 'in'/);
    expect(validate({ ...document, openapi: '3.0.3' })).toContain('/openapi: must match pattern "^3\\.1\\.\\d+(-.+)?$"');
  });

  it('sees only the output\'s own properties, never what every object inherits', () => {
    const typed = compileOutputSchema(createKitAjv(), JSON.stringify({ type: 'object', properties: { constructor: { type: 'string' }, toString: { type: 'string' } } }));
    expect(typed(JSON.parse('{"name": "x"}'))).toEqual([]);
    expect(typed(JSON.parse('{"constructor": 1}'))).toEqual(['/constructor: must be string']);
    const required = compileOutputSchema(createKitAjv(), JSON.stringify({ type: 'object', required: ['constructor', '__proto__', 'hasOwnProperty'] }));
    expect(required(JSON.parse('{"name": "x"}'))).toEqual([
      "(root): must have required property 'constructor'",
      "(root): must have required property '__proto__'",
      "(root): must have required property 'hasOwnProperty'",
    ]);
    expect(required(JSON.parse('{"constructor": 1, "__proto__": 2, "hasOwnProperty": 3}'))).toEqual([]);
    const dependent = compileOutputSchema(createKitAjv(), JSON.stringify({ dependentRequired: { toString: ['name'] }, dependentSchemas: { valueOf: false } }));
    expect(dependent({})).toEqual([]);
  });

  it('runs patterns on RE2: ECMA-262 syntax, linear time, code points, no lookaround', () => {
    const validate = compileOutputSchema(createKitAjv(), JSON.stringify({
      type: 'object',
      properties: {
        evil: { type: 'string', pattern: '^(a|aa)+$' },
        word: { type: 'string', pattern: '^\\p{Lu}\\p{Ll}+$' },
        escape: { type: 'string', pattern: '^\\u00e9\\/.$' },
        named: { type: 'string', pattern: '^(?<major>\\d+)\\.\\d+$' },
      },
      propertyNames: { pattern: '^[a-z]+$' },
    }));
    expect(validate({ evil: 'a'.repeat(100_000), word: 'Émile', escape: 'é/😀', named: '3.1' })).toEqual([]);
    expect(validate({ evil: `${'a'.repeat(100_000)}b`, word: 'émile', escape: 'e/xy', named: '3', Bad: 1 })).toEqual([
      '(root): must match pattern "^[a-z]+$"',
      '(root): property name must be valid',
      '/evil: must match pattern "^(a|aa)+$"',
      '/word: must match pattern "^\\p{Lu}\\p{Ll}+$"',
      '/escape: must match pattern "^\\u00e9\\/.$"',
      '/named: must match pattern "^(?<major>\\d+)\\.\\d+$"',
    ]);
    expect(() => compileOutputSchema(createKitAjv(), '{"pattern": "^(?=.*\\\\d)"}')).toThrow(/^pattern "\^\(\?=\.\*\\d\)" is not supported by RE2/);
  });

  it('checks uniqueItems by JSON equality with a keyed look-up, not by comparing every pair of items', () => {
    // ajv's own keyword compares pairs (60,000 small arrays took 16 s on the host); this one keys each item.
    expect(createKitAjv().getKeyword('uniqueItems')).toMatchObject({ validate: expect.any(Function) });
    const validate = compileOutputSchema(createKitAjv(), JSON.stringify({ type: 'array', uniqueItems: true }));
    expect(validate([{ a: 1, b: [1, 2] }, 3, { b: [1, 2], a: 1.0 }])).toEqual(['(root): must NOT have duplicate items (items ## 2 and 0 are identical)']);
    expect(validate([0, -0])).toEqual(['(root): must NOT have duplicate items (items ## 1 and 0 are identical)']);
    // YAML's .inf and .nan are numbers JSON has no text for: not the same as null.
    expect(validate([Infinity, null, -Infinity, Number.NaN, '#Infinity'])).toEqual([]);
    expect(validate([Infinity, Infinity])).toEqual(['(root): must NOT have duplicate items (items ## 1 and 0 are identical)']);
    expect(validate([1, '1', [1], { 1: 1 }, null, true, [[1]], { a: { b: 1 } }, { a: { b: 2 } }])).toEqual([]);
    expect(validate(Array.from({ length: 60_000 }, (_, i) => [i]))).toEqual([]);
    const nested = compileOutputSchema(createKitAjv(), JSON.stringify({ properties: { tags: { items: { type: 'string' }, uniqueItems: true }, any: { uniqueItems: false } } }));
    expect(nested({ tags: ['a', 'b', 'a'], any: [1, 1] })).toEqual(['/tags: must NOT have duplicate items (items ## 2 and 0 are identical)']);
    expect(nested({ tags: 'not an array', any: [1, 1] })).toEqual([]);
  });

  it('keeps ajv-formats working', () => {
    const validate = compileOutputSchema(createKitAjv(), JSON.stringify({ properties: { id: { format: 'uuid' }, at: { format: 'date-time' }, re: { format: 'regex' } } }));
    expect(validate({ id: '0b7ad1a2-3c4d-4e5f-8a9b-0c1d2e3f4a5b', at: '2025-01-02T03:04:05Z', re: '^(?=a)' })).toEqual([]);
    expect(validate({ id: 'nope', at: 'yesterday', re: '(' })).toEqual([
      '/id: must match format "uuid"',
      '/at: must match format "date-time"',
      '/re: must match format "regex"',
    ]);
  });

  it('caps what patterns may cost: instructions per schema at compile time, matching steps per output', () => {
    const huge = Array.from({ length: 150 }, (_, i) => ({ pattern: `^[a-z]{${850 + i}}$` }));
    expect(() => compileOutputSchema(createKitAjv(), JSON.stringify({ anyOf: huge }))).toThrow(
      `makes the schema's patterns larger than ${MAX_SCHEMA_PATTERN_INSTRUCTIONS} RE2 instructions`,
    );
    const heavy = compileOutputSchema(createKitAjv(), JSON.stringify({ items: { pattern: '[\\p{L}]{1000}[\\p{N}]' } }));
    expect(heavy(['a'.repeat(500)])).toEqual(['/0: must match pattern "[\\p{L}]{1000}[\\p{N}]"']);
    const tooCostly = `would exceed ${MAX_PATTERN_STEPS_PER_OUTPUT} steps of pattern matching for one output`;
    expect(() => heavy(['a'.repeat(30_000)])).toThrow(`checking pattern "[\\p{L}]{1000}[\\p{N}]" against a string of 30000 characters ${tooCostly}`);
    // Steps add up over the whole document, and the next document starts afresh.
    const cheap = compileOutputSchema(createKitAjv(), JSON.stringify({ items: { pattern: '^b' } }));
    const megabyte = 'a'.repeat(1 << 20);
    expect(() => cheap(Array.from({ length: 50 }, () => megabyte))).toThrow(tooCostly);
    expect(cheap([megabyte])).toEqual(['/0: must match pattern "^b"']);
  });
});

describe('the pattern budget of a run', () => {
  it('is shared by every output the run checks: once spent, the rest cannot be checked', () => {
    const validator = compileOutputSchema(createKitAjv(), JSON.stringify({ type: 'string', pattern: '^a+$' }));
    const validate = (value: string) => {
      try {
        return validator(value);
      } catch (error) {
        return [(error as Error).message];
      }
    };
    const text = 'a'.repeat(50);
    const verdicts = meterPatternsForRun(() => [validate(text), validate(text), validate(text)], 2 * 51 * 3);
    expect(verdicts[0]).toEqual([]);
    expect(verdicts.at(-1)).toEqual([expect.stringContaining('steps of pattern matching for the run')]);
    // Outside a run, each output has its own budget again.
    expect(validate(text)).toEqual([]);
  });
});
