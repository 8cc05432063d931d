import { readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { lockTableUntilReleased } from '../helpers/table-lock-gate.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

const kitsDirectory = fileURLToPath(new URL('../../kits', import.meta.url));

async function shippedKitCount(): Promise<number> {
  const entries = await readdir(kitsDirectory, { withFileTypes: true });
  return entries.filter((entry) => entry.isDirectory() && existsSync(join(kitsDirectory, entry.name, 'kit.json'))).length;
}

const registeredBuiltIns = async (ownerUrl: string) =>
  (await ownerQuery<{ kit_id: string }>(ownerUrl, 'select k.kit_id from kits k join kit_versions v on v.kit_row_id = k.id where k.tenant_id is null')).map((row) => row.kit_id);

/**
 * A start registers the kits shipped in `kits/` (a deploy's new versions among them). A kit whose
 * registration lost its connection — a failover, a restart of PostgreSQL just then — was logged
 * as "could not be registered", as a broken kit directory is, and the start went on: the service
 * ran without that kit, or without the version just deployed, until it was next restarted.
 */
describe('a start whose registration of a built-in kit loses its connection', () => {
  it('fails, and the next start registers every built-in kit', async () => {
    const shipped = await shippedKitCount();
    expect(shipped).toBeGreaterThan(0);
    const database = await createTestDatabase();
    // The first kit's version is held here until the test ends its session.
    const versions = await lockTableUntilReleased(database.ownerUrl, 'kit_versions');
    let service: TestApp | undefined;
    try {
      const starting = startTestApp({ database });
      // Seen as settled from here on, so a start that fails before the assertion is not unhandled.
      const outcome = starting.then(
        (app) => ({ app }),
        (error: unknown) => ({ error }),
      );
      await versions.untilWaitedOn('the first built-in kit being registered');
      await versions.endWaiters();
      await versions.release();
      const started = await outcome;
      if ('app' in started) {
        service = started.app;
        // The defect: up and answering, with a built-in kit missing.
        expect.soft(await registeredBuiltIns(database.ownerUrl)).toHaveLength(shipped);
      }
      // The session ended (57P01), or, as kysely rolls the transaction back on it, its connection gone.
      const failure = 'error' in started ? (started.error as { code?: string; message?: string }) : undefined;
      expect(failure?.code === '57P01' || failure?.message === 'Connection terminated unexpectedly' ? 'lost connection' : (failure?.message ?? 'started without failing')).toBe('lost connection');
    } finally {
      await versions.release();
      await service?.stop();
    }
    const restarted = await startTestApp({ database });
    try {
      expect((await registeredBuiltIns(database.ownerUrl)).length).toBe(shipped);
    } finally {
      await restarted.stop();
    }
  }, 60_000);
});
