import { describe, expect, it } from 'vitest';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp } from '../helpers/test-app.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { until } from '../helpers/until.ts';

/** The session graphile-worker keeps to hear of new jobs (LISTEN "jobs:insert"), by its pid. */
const listeners = "pg_stat_activity where datname = current_database() and query like 'LISTEN \"jobs:insert\"%'";

/**
 * A worker hears of new jobs on a session of its own; a failover or a restart of PostgreSQL ends it.
 * Checked to hold: graphile-worker opens another (and polls every second meanwhile).
 */
describe("a worker whose job listener's session is ended", () => {
  it('listens again on a new session and runs jobs', async () => {
    const database = await createTestDatabase();
    const worker = await startTestApp({ database, mode: 'worker' });
    try {
      await until('the worker listens for jobs', async () => (await countRows(database.ownerUrl, listeners)) === 1, 20_000);
      const [{ pid }] = await ownerQuery(database.ownerUrl, `select pid from ${listeners}`);
      expect((await ownerQuery(database.ownerUrl, 'select pg_terminate_backend($1, 10000) as gone', [pid]))[0].gone).toBe(true);
      await until('the worker listens again', async () => (await countRows(database.ownerUrl, `${listeners} and pid <> $1`, [pid])) === 1, 20_000);
      const [{ id }] = await ownerQuery(database.ownerUrl, "select (graphile_worker.add_job('maintenance.prune_worker_heartbeats', '{}'::json)).id::text as id");
      await until('the job ran', async () => (await countRows(database.ownerUrl, 'graphile_worker.jobs where id = $1', [id])) === 0, 20_000);
    } finally {
      await worker.stop();
    }
  }, 60_000);
});
