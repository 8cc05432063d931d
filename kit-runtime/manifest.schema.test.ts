import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { kitManifestJsonSchema, parseKitManifest } from './manifest.schema.ts';
import { exampleManifest } from './test-support/kits.ts';

function withChanges(change: (m: Record<string, any>) => void): unknown {
  const manifest = structuredClone(exampleManifest()) as Record<string, any>;
  change(manifest);
  return manifest;
}

function errorsOf(manifest: unknown): string[] {
  const parsed = parseKitManifest(manifest);
  return parsed.ok ? [] : parsed.errors;
}

describe('kit manifest', () => {
  it('accepts the example manifest', () => {
    expect(parseKitManifest(exampleManifest())).toMatchObject({ ok: true });
  });

  it('names the path of every error', () => {
    const errors = errorsOf(
      withChanges((m) => {
        m.metadata.id = 'Not A Slug';
        m.metadata.version = 'v1';
        m.outputs[2].filename = '../escape.md';
        m.outputs[1].outputType = 'xml';
        m.discovery.pools = ['/etc/passwd'];
      }),
    );
    expect(errors).toEqual(
      expect.arrayContaining([
        'metadata.id: must be a slug: lowercase letters, digits and hyphens',
        'metadata.version: must be a semantic version such as 1.2.0',
        'outputs[2].filename: filename must not contain ".." segments',
        expect.stringMatching(/^outputs\[1\]\.outputType: /),
        'discovery.pools[0]: file path must be relative, not absolute',
      ]),
    );
  });

  it('rejects unknown keys, so misspelt settings are not silently ignored', () => {
    expect(errorsOf(withChanges((m) => { m.output = m.outputs; }))).toEqual([expect.stringMatching(/^\(manifest\): Unrecognized key: "output"/)]);
  });

  it('requires a non-empty list of unique, known phases', () => {
    expect(errorsOf(withChanges((m) => { m.phases = []; delete m.hooks; }))).toEqual(['phases: must declare at least one phase']);
    expect(errorsOf(withChanges((m) => { m.phases = ['SPEC', 'RENDER']; }))[0]).toMatch(/^phases\[1\]: Invalid option/);
    expect(errorsOf(withChanges((m) => { m.phases = ['SPEC', 'PLAN', 'SPEC', 'VERIFY']; }))).toEqual(['phases[2]: duplicate phase "SPEC"']);
  });

  it('rejects duplicate output ids and hooks for undeclared phases', () => {
    const errors = errorsOf(
      withChanges((m) => {
        m.outputs[1].id = 'openapi';
        m.phases = ['SPEC', 'VERIFY'];
        m.hooks = { SPEC: 'hooks/spec.js', APPLY: 'hooks/apply.js' };
      }),
    );
    expect(errors).toEqual(['outputs[1]: duplicate output id "openapi"', 'hooks.APPLY: hook for APPLY, which is not in phases']);
  });

  it('checks hook keys, credentials and required input paths', () => {
    const errors = errorsOf(
      withChanges((m) => {
        m.hooks = { BUILD: 'hooks/build.js' };
        m.credentials = [{ id: 'api-key', description: 'key', required: 'yes' }];
        m.inputs = { required: ['businessProfile..name'] };
      }),
    );
    expect(errors).toEqual([
      'hooks: Unrecognized key: "BUILD"',
      expect.stringMatching(/^credentials\[0\]\.required: /),
      'inputs.required[0]: must be a dotted path such as businessProfile.company.name',
    ]);
  });

  it('bounds credential ids by the longest a credential can be stored under, except in a stored version', () => {
    const longest = 'c'.repeat(100);
    expect(errorsOf(withChanges((m) => { m.credentials = [{ id: longest, description: 'key', required: true }]; }))).toEqual([]);
    const tooLong = withChanges((m) => { m.credentials = [{ id: `${longest}c`, description: 'key', required: false }]; });
    expect(errorsOf(tooLong)).toEqual(['credentials[0].id: must be at most 100 characters, the longest id a credential can be stored under']);
    // A version published before the bound keeps running: the credential it does not require is all it lacks.
    expect(parseKitManifest(tooLong, { stored: true })).toMatchObject({ ok: true });
  });

  it('allows Handlebars in a filename but checks a static one', () => {
    expect(errorsOf(withChanges((m) => { m.outputs[0].filename = '{{slug}}/openapi.json'; }))).toEqual([]);
    expect(errorsOf(withChanges((m) => { m.outputs[0].filename = 'C:\\\\x.json'; }))).toEqual(['outputs[0].filename: filename must use "/" as separator, not "\\"']);
  });

  it('bounds the platform name and category like the other display names, except in a stored version', () => {
    expect(errorsOf(withChanges((m) => { m.platform = { name: 'n'.repeat(200), category: 'c'.repeat(200) }; }))).toEqual([]);
    const long = withChanges((m) => { m.platform = { name: 'n'.repeat(200_000), category: 'c'.repeat(201) }; });
    expect(errorsOf(long)).toEqual([
      'platform.name: Too big: expected string to have <=200 characters',
      'platform.category: Too big: expected string to have <=200 characters',
    ]);
    expect(errorsOf(withChanges((m) => { m.platform.name = ''; }))).toEqual(['platform.name: Too small: expected string to have >=1 characters']);
    // A version published before the bound keeps running; every other rule still holds for it.
    expect(parseKitManifest(long, { stored: true })).toMatchObject({ ok: true });
    expect(parseKitManifest(withChanges((m) => { m.platform.name = 'n'.repeat(201); m.outputs[1].id = 'openapi'; }), { stored: true })).toEqual({
      ok: false,
      errors: ['outputs[1]: duplicate output id "openapi"'],
    });
  });

  const noVisibleCharacter = 'must contain a visible character, not only spaces, zero-width characters or bidirectional controls';

  it.each([
    ['spaces', '   '],
    ['Unicode spaces and a line break', '\u00a0\u2003\u3000\n'],
    ['zero-width characters', '\u200b\u200d'],
    ['bidirectional controls', '\u202e\u2066\u2069\u200f'],
    ['a word joiner, a soft hyphen and a Hangul filler', '\u2060\u00ad\u3164'],
    ['braille blanks', '\u2800\u2800'],
    ['combining marks', '\u0301\u0301'],
    ['format characters', '\ufff9\u206a'],
  ])('refuses display names of nothing but %s', (_, blank) => {
    const errors = errorsOf(withChanges((m) => {
      m.metadata.displayName = blank;
      m.metadata.author = blank;
      m.platform = { name: blank, category: blank };
    }));
    expect(errors).toEqual([
      `metadata.displayName: ${noVisibleCharacter}`,
      `metadata.author: ${noVisibleCharacter}`,
      `platform.name: ${noVisibleCharacter}`,
      `platform.category: ${noVisibleCharacter}`,
    ]);
  });

  it('keeps display names with a visible character, and loads a stored version with a blank one', () => {
    for (const name of [' Service starter ', '\u202eevil\u202c', 'ab\u200bcd', '👩🏽‍💻', 'e\u0301', 'فارسی']) {
      expect(errorsOf(withChanges((m) => { m.metadata.displayName = name; m.platform.name = name; })), name).toEqual([]);
    }
    const blank = withChanges((m) => { m.metadata.displayName = '\u200b'; m.metadata.author = '  '; m.platform.category = '\u202e'; });
    expect(parseKitManifest(blank, { stored: true })).toMatchObject({ ok: true });
  });

  it('exports a JSON Schema that validates manifests for authors', () => {
    const validate = new Ajv2020({ strict: false }).compile(kitManifestJsonSchema);
    expect(validate(exampleManifest())).toBe(true);
    expect(validate(withChanges((m) => { m.metadata.kitType = 'plugin'; }))).toBe(false);
    for (const key of ['name', 'category']) {
      expect(validate(withChanges((m) => { m.platform[key] = 'x'.repeat(200); })), key).toBe(true);
      expect(validate(withChanges((m) => { m.platform[key] = 'x'.repeat(201); })), key).toBe(false);
      expect(validate.errors?.[0]).toMatchObject({ instancePath: `/platform/${key}`, keyword: 'maxLength' });
    }
  });
});
