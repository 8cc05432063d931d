// Output validation runs on the host, outside the isolate's time limit: a kit's schema patterns
// must not be able to stall the worker, and patterns the linear-time engine cannot run are refused
// when the kit is loaded (so at publish).
import { afterAll, describe, expect, it } from 'vitest';
import { loadKitPackage } from './kit-package.ts';
import { createKitRuntime } from './kit-runtime.ts';
import { exampleFiles, exampleInput, exampleManifest, loadOrThrow } from './test-support/kits.ts';

const runtime = createKitRuntime({ limits: { timeoutMs: 3000 } });
afterAll(() => runtime.close());

// With V8's backtracking engine each extra "a" doubles the time: 31 took ten seconds, 48 would take days.
const evil = 'a'.repeat(48) + '!';

function kitWithOpenApiSchema(schema: object, template: string) {
  const files = exampleFiles();
  files['schemas/openapi.schema.json'] = JSON.stringify(schema);
  files['templates/openapi.json.hbs'] = template;
  return { manifest: exampleManifest(), files };
}

describe('kit schema patterns', () => {
  it('checks a catastrophic-backtracking pattern against a long string and reports the output invalid', async () => {
    const { manifest, files } = kitWithOpenApiSchema(
      {
        type: 'object',
        properties: { v: { type: 'string', pattern: '^(a+)+$' } },
        patternProperties: { '^(b+)+$': { type: 'number' } },
        additionalProperties: false,
      },
      JSON.stringify({ v: evil, [`${'b'.repeat(48)}!`]: 1, bbb: 'not a number' }),
    );
    const result = await runtime.execute(loadOrThrow(manifest, files), { tenantId: 'tenant-a', input: exampleInput });
    const openapi = result.outputs.find((o) => o.outputId === 'openapi');
    expect(openapi).toMatchObject({ status: 'invalid' });
    expect(openapi?.validationErrors).toEqual([
      `schema: (root): must NOT have additional properties "${'b'.repeat(48)}!"`,
      'schema: /v: must match pattern "^(a+)+$"',
      'schema: /bbb: must be number',
    ]);
    expect(result.status).toBe('partial');
  });

  it('still accepts what such a pattern matches', async () => {
    const { manifest, files } = kitWithOpenApiSchema({ properties: { v: { pattern: '^(a+)+$' } } }, JSON.stringify({ v: 'a'.repeat(48) }));
    const result = await runtime.execute(loadOrThrow(manifest, files), { tenantId: 'tenant-a', input: exampleInput });
    expect(result.outputs.find((o) => o.outputId === 'openapi')).toMatchObject({ status: 'valid', validationErrors: [] });
  });

  it('refuses to load a kit whose schema uses lookaround or backreferences, naming the schema file', () => {
    for (const [pattern, reason] of [
      ['^(?!x-)', /not supported by RE2/],
      ['(?<=a)b', /not supported by RE2/],
      ['^(a)\\1$', /backreference/],
      ['(?<q>["\'])\\k<q>', /backreference/],
      ['\\e', /not an ECMA-262 regular expression/],
    ] as const) {
      for (const schema of [{ properties: { v: { pattern } } }, { patternProperties: { [pattern]: { type: 'string' } } }]) {
        const { manifest, files } = kitWithOpenApiSchema(schema, '{}');
        const loaded = loadKitPackage({ manifest, files });
        expect(loaded.ok, pattern).toBe(false);
        if (loaded.ok) continue;
        expect(loaded.problems).toHaveLength(1);
        expect(loaded.problems[0]).toMatchObject({ file: 'schemas/openapi.schema.json' });
        expect(loaded.problems[0]?.message).toContain(`pattern "${pattern}"`);
        expect(loaded.problems[0]?.message).toMatch(reason);
      }
    }
  });
});
