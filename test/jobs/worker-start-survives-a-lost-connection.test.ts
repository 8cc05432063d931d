import { describe, expect, it } from 'vitest';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { lockTableUntilReleased } from '../helpers/table-lock-gate.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { until } from '../helpers/until.ts';

/**
 * A worker's first look for jobs reads the ids of the tasks it runs, once, and graphile-worker kept
 * that read's promise: when it failed — its connection ended by a failover or a restart of
 * PostgreSQL just as the worker started — every later look for jobs failed with the same error,
 * without asking the database again. The worker stayed up, its heartbeat current, and never ran a
 * job until restarted; it said so only at debug level.
 */
describe('a worker whose first read of its task ids loses its connection', () => {
  it('reads them again and runs jobs once the database is back', async () => {
    const database = await createTestDatabase();
    // The read's first statement registers the task names: held here until the test ends its session.
    const tasks = await lockTableUntilReleased(database.ownerUrl, 'graphile_worker._private_tasks');
    let worker: TestApp | undefined;
    try {
      const starting = startTestApp({ database, mode: 'worker' });
      await tasks.untilWaitedOn("the worker's first read of its task ids");
      await tasks.endWaiters();
      await tasks.release();
      worker = await starting;
      const [{ id }] = await ownerQuery(database.ownerUrl, "select (graphile_worker.add_job('maintenance.prune_worker_heartbeats', '{}'::json)).id::text as id");
      await until('the job ran', async () => (await countRows(database.ownerUrl, 'graphile_worker.jobs where id = $1', [id])) === 0, 20_000);
      expect(await countRows(database.ownerUrl, 'graphile_worker.jobs')).toBe(0);
    } finally {
      await tasks.release();
      await worker?.stop();
    }
  }, 60_000);
});
