import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileOutputSchema, createKitAjv, resolveStaticDynamicRefs } from './output-schemas.ts';

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
});
