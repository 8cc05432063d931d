import { afterAll, describe, expect, it } from 'vitest';
import { createKitRuntime } from './kit-runtime.ts';
import type { KitPackage } from './kit-package.ts';
import { markdownKit } from './test-support/kits.ts';

/**
 * A composite cancelled while one of its components runs fails as any cancelled run does
 * (PHASE_FAILED, "the run was cancelled"), not as if that component had failed of its own accord:
 * its caller (the worker at shutdown) tells the two apart by that message.
 */
const runtime = createKitRuntime({ limits: { timeoutMs: 5000 } });
afterAll(() => runtime.close());

const component = markdownKit('docs');
const composite = markdownKit('bundle', { components: [{ kitId: 'docs', prefix: 'd' }] });

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
