import { describe, expect, it } from 'vitest';
import { createKitPackageChecker } from '../../control-plane/domains/kits/kit-package-checker.ts';

/**
 * The publish check's threads, with a stand-in check that answers at once or hangs on demand: a
 * stuck check costs only itself, and waiting is bounded (a publish waits inside its transaction).
 */
const standIn = new URL('../helpers/stand-in-package-check.worker.ts', import.meta.url);
const names = (checks: PromiseSettledResult<unknown>[]) =>
  checks.map((check) => (check.status === 'fulfilled' ? (check.value as { manifest: { name: string } }).manifest.name : (check.reason as { code?: string; message: string }).code ?? check.reason.message));

describe('the kit package checker', () => {
  it('answers a stuck check SERVICE_UNAVAILABLE and still answers every check that was waiting', async () => {
    const checker = createKitPackageChecker({ threads: 1, timeoutMs: 300, workerUrl: standIn });
    const checks = await Promise.allSettled([
      checker.check({ name: 'stuck', hang: true }, {}),
      checker.check({ name: 'next' }, {}),
      checker.check({ name: 'last' }, {}),
    ]);
    expect(names(checks)).toEqual(['SERVICE_UNAVAILABLE', 'next', 'last']);
    expect((await checker.check({ name: 'later' }, {})).ok).toBe(true);
  });

  it('runs checks side by side on its threads, so one slow package does not hold up the rest', async () => {
    const checker = createKitPackageChecker({ threads: 2, timeoutMs: 1_000, workerUrl: standIn });
    const stuck = checker.check({ name: 'stuck', hang: true }, {});
    // Answered by the other thread while the first is still busy.
    expect(await checker.check({ name: 'quick' }, {})).toEqual({ ok: true, manifest: { name: 'quick' } });
    await expect(stuck).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });

  it('refuses a check at once when too many are waiting, instead of queueing without end', async () => {
    const checker = createKitPackageChecker({ threads: 1, maxWaiting: 2, timeoutMs: 500, workerUrl: standIn });
    const checks = Promise.allSettled([
      checker.check({ name: 'stuck', hang: true }, {}),
      checker.check({ name: 'first' }, {}),
      checker.check({ name: 'second' }, {}),
      checker.check({ name: 'third' }, {}),
    ]);
    expect(names(await checks)).toEqual(['SERVICE_UNAVAILABLE', 'first', 'second', 'SERVICE_UNAVAILABLE']);
  });
});
