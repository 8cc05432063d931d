import { afterAll, describe, expect, it } from 'vitest';
import { createKitRuntime } from './kit-runtime.ts';
import { parseKitManifest } from './manifest.schema.ts';
import type { KitPackage } from './kit-package.ts';
import { loadOrThrow } from './test-support/kits.ts';
import { MAX_RENDERED_OUTPUTS } from './render-outputs.ts';

const runtime = createKitRuntime({ limits: { timeoutMs: 3000 } });
afterAll(() => runtime.close());

const input = { projectId: 'p', entities: [{ name: 'Rocket' }, { name: 'Launch' }] };

function fileKit(id: string, extra: Record<string, unknown> = {}, files: Record<string, string> = {}): KitPackage {
  return loadOrThrow(
    {
      metadata: { id, displayName: id, version: '1.0.0', description: '', author: 'test', kitType: 'file' },
      platform: { name: 'none', category: 'test' },
      phases: ['PLAN'],
      outputs: [{ id: 'readme', filename: 'README.md', template: 't/readme.hbs', outputType: 'markdown' }],
      discovery: { pools: [] },
      ...extra,
    },
    { 't/readme.hbs': `# {{projectId}} from ${id}\n`, ...files },
  );
}

function composite(components: unknown[], extra: Record<string, unknown> = {}): KitPackage {
  return loadOrThrow(
    {
      metadata: { id: 'bundle', displayName: 'Bundle', version: '1.0.0', description: '', author: 'test', kitType: 'composite' },
      platform: { name: 'none', category: 'test' },
      phases: ['PLAN', 'VERIFY'],
      outputs: [{ id: 'index', filename: 'INDEX.md', template: 't/index.hbs', outputType: 'markdown' }],
      discovery: { pools: [] },
      components,
      hooks: { VERIFY: 'h/verify.js' },
      ...extra,
    },
    {
      't/index.hbs': '# Index\n',
      'h/verify.js': 'function verify(context) { return { warnings: [context.outputs.map(function (o) { return o.outputId + "=" + o.filename; }).join(",")] }; }',
    },
  );
}

describe('forEach outputs', () => {
  const perEntity = () =>
    fileKit('per-entity', {
      phases: ['SPEC'],
      hooks: { SPEC: 'h/spec.js' },
      outputs: [
        { id: 'entity', filename: 'entities/{{@output.item.slug}}.json', template: 't/entity.hbs', outputType: 'json', schema: 's/entity.json', forEach: '@spec.entities' },
        { id: 'name', filename: 'names/{{@output.index}}.txt', template: 't/name.hbs', outputType: 'text', forEach: 'entities' },
      ],
    }, {
      'h/spec.js': 'function spec(c) { return { entities: c.input.entities.map(function (e) { return { name: e.name, slug: e.name.toLowerCase() }; }) }; }',
      't/entity.hbs': '{"title": {{json @output.item.name}}, "index": {{@output.index}}, "project": {{json projectId}} }',
      't/name.hbs': '{{@output.item.name}}',
      's/entity.json': JSON.stringify({ type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 4 } } }),
    });

  it('renders one output per item, with the item and index as @output.item / @output.index', async () => {
    const result = await runtime.execute(perEntity(), { tenantId: 't', input });
    expect(result.outputs.map((o) => [o.outputId, o.filename, o.status])).toEqual([
      ['entity.0', 'entities/rocket.json', 'valid'],
      ['entity.1', 'entities/launch.json', 'valid'],
      ['name.0', 'names/0.txt', 'valid'],
      ['name.1', 'names/1.txt', 'valid'],
    ]);
    expect(JSON.parse(result.outputs[1]!.content)).toEqual({ title: 'Launch', index: 1, project: 'p' });
    expect(result.status).toBe('completed');
  });

  it('validates each item on its own and renders nothing for an empty list', async () => {
    const short = await runtime.execute(perEntity(), { tenantId: 't', input: { ...input, entities: [{ name: 'Rocket' }, { name: 'Ox' }] } });
    expect(short.status).toBe('partial');
    expect(short.outputs[1]).toMatchObject({ outputId: 'entity.1', status: 'invalid', validationErrors: ['schema: /title: must NOT have fewer than 4 characters'] });
    const none = await runtime.execute(perEntity(), { tenantId: 't', input: { ...input, entities: [] } });
    expect([none.status, none.outputs.length]).toEqual(['completed', 0]);
  });

  it('fails the run when the path does not lead to an array', async () => {
    const result = await runtime.execute(perEntity(), { tenantId: 't', input: { projectId: 'p', entities: 'Rocket' } });
    expect(result.status).toBe('failed');
    expect(result.message).toMatch(/entities/);
    expect(parseKitManifest({ ...fileKit('x').manifest, outputs: [{ id: 'a', filename: 'a', template: 't', outputType: 'text', forEach: '@input.x' }] }).ok).toBe(false);
  });
});

describe('composite kits', () => {
  const kits = new Map<string, KitPackage>([
    ['docs', fileKit('docs')],
    ['api', fileKit('api', { outputs: [{ id: 'spec', filename: 'openapi.yaml', template: 't/spec.hbs', outputType: 'yaml' }] }, { 't/spec.hbs': 'openapi: "3.1.0"\n' })],
  ]);
  const resolveKit = async ({ kitId }: { kitId: string }) => kits.get(kitId) ?? null;

  it('runs each component with the same input and merges outputs under their prefix', async () => {
    const kit = composite([{ kitId: 'docs', prefix: 'docs' }, { kitId: 'api', version: '1.0.0', prefix: 'api' }]);
    const result = await runtime.execute(kit, { tenantId: 't', input, resolveKit });
    expect(result.status).toBe('completed');
    expect(result.outputs.map((o) => [o.outputId, o.filename, o.status])).toEqual([
      ['index', 'INDEX.md', 'valid'],
      ['docs.readme', 'docs/README.md', 'valid'],
      ['api.spec', 'api/openapi.yaml', 'warning'],
    ]);
    expect(result.outputs[1]!.content).toBe('# p from docs\n');
    expect(result.components).toEqual([
      { prefix: 'docs', kitRef: 'docs@1.0.0', status: 'completed', message: null },
      { prefix: 'api', kitRef: 'api@1.0.0', status: 'completed', message: null },
    ]);
    // The composite's own later phases see the merged outputs.
    expect(result.verifyWarnings).toEqual(['index=INDEX.md,docs.readme=docs/README.md,api.spec=api/openapi.yaml']);
    expect(result.phases.map((p) => p.phase)).toEqual(['PLAN', 'RENDER', 'COMPOSE', 'VALIDATE', 'VERIFY']);
  });

  it('fails clearly for an unknown component, a version mismatch, a failing component, a cycle and no resolver', async () => {
    const run = async (components: unknown[], resolver = resolveKit) =>
      (await runtime.execute(composite(components), { tenantId: 't', input, ...(resolver ? { resolveKit: resolver } : {}) })).message;
    expect(await run([{ kitId: 'nope', prefix: 'x' }])).toBe('COMPOSE: component "x": kit nope was not found');
    expect(await run([{ kitId: 'docs', version: '2.0.0', prefix: 'x' }])).toBe('COMPOSE: component "x": asked for docs@2.0.0, resolved docs@1.0.0');
    const strict = fileKit('strict', { inputs: { required: ['businessProfile.company.name'] }, phases: ['CHECK'] });
    expect(await run([{ kitId: 'strict', prefix: 's' }], async () => strict)).toBe(
      'COMPOSE: component "s" (strict@1.0.0) failed: CHECK: missing required inputs: businessProfile.company.name',
    );
    const self = composite([{ kitId: 'bundle', prefix: 'again' }]);
    expect(await run([{ kitId: 'bundle', prefix: 'again' }], async () => self)).toBe(
      'COMPOSE: component "again": bundle@1.0.0 includes itself (bundle → bundle)',
    );
    expect((await runtime.execute(composite([{ kitId: 'docs', prefix: 'd' }]), { tenantId: 't', input })).message).toMatch(/needs the caller to resolve its components/);
  });

  it('refuses composites nested deeper than a run allows, naming the chain as publishing does', async () => {
    const layer = (id: string, below: string) => composite([{ kitId: below, prefix: below }], { metadata: { id, displayName: id, version: '1.0.0', description: '', author: 'test', kitType: 'composite' } });
    const layers = new Map<string, KitPackage>([['c2', layer('c2', 'c3')], ['c3', layer('c3', 'c4')], ['c4', layer('c4', 'docs')], ['docs', fileKit('docs')]]);
    const result = await runtime.execute(layer('c1', 'c2'), { tenantId: 't', input, resolveKit: async ({ kitId }) => layers.get(kitId) ?? null });
    expect(result.status).toBe('failed');
    expect(result.message).toMatch(/composites nest 4 deep, and a run allows 3: c1 → c2 → c3 → c4$/);
    // Three composites deep runs.
    const three = await runtime.execute(layer('c2', 'c3'), { tenantId: 't', input, resolveKit: async ({ kitId }) => layers.get(kitId) ?? null });
    expect(three.status).toBe('completed');
  });

  it('keeps output ids unique when a forEach output of the composite collides with a component output', async () => {
    const zero = fileKit('zero-x', { outputs: [{ id: '0', filename: 'zero.md', template: 't/readme.hbs', outputType: 'markdown' }] });
    const kit = composite([{ kitId: 'zero-x', version: '1.0.0', prefix: 'a' }], {
      phases: ['PLAN'],
      hooks: {},
      outputs: [{ id: 'a', filename: 'own-{{@output.index}}.md', template: 't/index.hbs', outputType: 'markdown', forEach: 'discoveryAnswers.list' }],
    });
    const result = await runtime.execute(kit, { tenantId: 't', input: { projectId: 'p', discoveryAnswers: { list: [1, 2] } }, resolveKit: async () => zero });
    expect(result.outputs.map((o) => [o.outputId, o.filename, o.status])).toEqual([
      ['a.0', 'own-0.md', 'valid'],
      ['a.1', 'own-1.md', 'valid'],
      ['a.0~2', 'a/zero.md', 'invalid'],
    ]);
    expect(result.outputs[2]!.validationErrors).toEqual(['output id "a.0" is already used by another output of this run, so this one is kept as "a.0~2"']);
    expect(result.outputs[2]!.content).toBe('# p from zero-x\n');
    expect(new Set(result.outputs.map((o) => o.outputId)).size).toBe(result.outputs.length);
    expect([result.status, result.message]).toEqual(['partial', 'some outputs are invalid: a.0~2']);
  });

  it('refuses a component output whose name cannot unpack beside an earlier one: a file where it needs a directory, or only letter case apart', async () => {
    const kit = composite([{ kitId: 'docs', prefix: 'docs' }, { kitId: 'api', prefix: 'api' }], {
      outputs: [
        { id: 'index', filename: 'INDEX.md', template: 't/index.hbs', outputType: 'markdown' },
        { id: 'docs-file', filename: 'docs', template: 't/index.hbs', outputType: 'text' },
        { id: 'api-upper', filename: 'API/OPENAPI.YAML', template: 't/index.hbs', outputType: 'text' },
      ],
    });
    const result = await runtime.execute(kit, { tenantId: 't', input, resolveKit });
    expect(result.outputs.map((o) => [o.outputId, o.status, o.validationErrors])).toEqual([
      ['index', 'valid', []],
      ['docs-file', 'valid', []],
      ['api-upper', 'valid', []],
      ['docs.readme', 'invalid', ['filename "docs/README.md" needs a directory "docs", but "docs" is a file used by output "docs-file"']],
      ['api.spec', 'invalid', ['filename "api/openapi.yaml" differs only in letter case from "API/OPENAPI.YAML", used by output "api-upper"']],
    ]);
    expect(result.status).toBe('partial');
  });

  it('holds the whole run, components included, to the output cap: each component within it alone is not enough', async () => {
    const many = fileKit('many', { outputs: [{ id: 'n', filename: 'n/{{@output.index}}.txt', template: 't/n.hbs', outputType: 'text', forEach: 'discoveryAnswers.items' }] }, { 't/n.hbs': 'x' });
    const items = Array.from({ length: 200 }, (_, i) => i);
    const run = async (copies: number) => {
      const kit = composite(Array.from({ length: copies }, (_, i) => ({ kitId: 'many', prefix: `c${i}` })), { phases: ['PLAN'], hooks: {} });
      return runtime.execute(kit, { tenantId: 't', input: { projectId: 'p', discoveryAnswers: { items } }, resolveKit: async () => many });
    };
    const within = await run(2);
    expect([within.status, within.outputs.length]).toEqual(['completed', 401]);
    const beyond = await run(3);
    expect(beyond.status).toBe('failed');
    expect(beyond.message).toBe(`COMPOSE: the kit would render more than ${MAX_RENDERED_OUTPUTS} outputs (with its components)`);
  });

  it('holds the whole run, components included, to one time limit: components spend the composite\'s time', async () => {
    const quick = createKitRuntime({ limits: { timeoutMs: 1500 } });
    try {
      // Each component alone keeps well within the limit; four of them together do not.
      const slow = fileKit('slow', { phases: ['PLAN'], hooks: { PLAN: 'h/plan.js' } }, { 'h/plan.js': 'function plan() { var end = Date.now() + 600; while (Date.now() < end) {} return {}; }' });
      const alone = await quick.execute(slow, { tenantId: 't', input });
      expect(alone.status, alone.message ?? '').toBe('completed');
      const kit = composite(['a', 'b', 'c', 'd'].map((prefix) => ({ kitId: 'slow', prefix })), { phases: ['PLAN'], hooks: {} });
      const result = await quick.execute(kit, { tenantId: 't', input, resolveKit: async () => slow });
      expect(result.status).toBe('failed');
      expect(result.message).toMatch(/^COMPOSE: component "[a-d]" \(slow@1\.0\.0\) failed: .*time limit/);
    } finally {
      await quick.close();
    }
  });

  it('keeps components to composite kits and composites to kits with components', () => {
    const base = fileKit('x').manifest;
    expect(parseKitManifest({ ...base, components: [{ kitId: 'docs', prefix: 'd' }] })).toEqual({ ok: false, errors: ['components: only kits of kitType composite have components'] });
    expect(parseKitManifest({ ...base, metadata: { ...base.metadata, kitType: 'composite' } })).toEqual({ ok: false, errors: ['components: a composite kit must declare at least one component'] });
    const duplicate = parseKitManifest({ ...base, metadata: { ...base.metadata, kitType: 'composite' }, components: [{ kitId: 'a', prefix: 'd' }, { kitId: 'b', prefix: 'd' }] });
    expect(duplicate).toEqual({ ok: false, errors: ['components[1]: duplicate component prefix "d"'] });
  });
});
