import { afterAll, describe, expect, it } from 'vitest';
import { createKitRuntime } from './kit-runtime.ts';
import type { KitPackage } from './kit-package.ts';
import { loadOrThrow } from './test-support/kits.ts';

/**
 * A composite cancelled while one of its components runs fails as any cancelled run does
 * (PHASE_FAILED, "the run was cancelled"), not as if that component had failed of its own accord:
 * its caller (the worker at shutdown) tells the two apart by that message.
 */
const runtime = createKitRuntime({ limits: { timeoutMs: 5000 } });
afterAll(() => runtime.close());

const component = loadOrThrow(
  {
    metadata: { id: 'docs', displayName: 'docs', version: '1.0.0', description: '', author: 'test', kitType: 'file' },
    platform: { name: 'none', category: 'test' },
    phases: ['PLAN'],
    outputs: [{ id: 'readme', filename: 'README.md', template: 't/readme.hbs', outputType: 'markdown' }],
    discovery: { pools: [] },
  },
  { 't/readme.hbs': '# docs\n' },
);
const composite = loadOrThrow(
  {
    metadata: { id: 'bundle', displayName: 'Bundle', version: '1.0.0', description: '', author: 'test', kitType: 'composite' },
    platform: { name: 'none', category: 'test' },
    phases: ['PLAN'],
    outputs: [{ id: 'index', filename: 'INDEX.md', template: 't/index.hbs', outputType: 'markdown' }],
    discovery: { pools: [] },
    components: [{ kitId: 'docs', prefix: 'd' }],
  },
  { 't/index.hbs': '# Index\n' },
);

describe('a composite cancelled while its component runs', () => {
  it('fails PHASE_FAILED at COMPOSE with "the run was cancelled"', async () => {
    const cancel = new AbortController();
    const result = await runtime.execute(composite, {
      tenantId: 't',
      input: {},
      signal: cancel.signal,
      // The worker shuts down as the component is being started.
      resolveKit: async (): Promise<KitPackage> => {
        cancel.abort();
        return component;
      },
    });
    expect(result.error).toEqual({ code: 'PHASE_FAILED', phase: 'COMPOSE', message: 'the run was cancelled' });
  });
});
