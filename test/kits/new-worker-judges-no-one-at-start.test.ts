import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiWithKitAndProject, busyPlanKit, FAST_REAPING_WORKER_ENV, waitForExecution } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { until } from '../helpers/until.ts';

/**
 * When the database comes back from an outage, every heartbeat is older than the stale period,
 * live workers' included, until each beats again. A worker that starts just then (a supervisor
 * starting one, a scale-out, a restart) has not itself been beating for a whole period: it must
 * not take a live worker's silence for death and fail the execution that worker is running.
 */
let api: TestApp;
const workers: TestApp[] = [];
let key: string;
let orgId: string;
let execute: () => Promise<string>;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, sql, values);
const workerEnv = FAST_REAPING_WORKER_ENV;

beforeAll(async () => {
  // PLAN takes 3 s of busy work: time for the second worker to start while it runs.
  ({ api, key, orgId, execute } = await apiWithKitAndProject(busyPlanKit('slow-kit', 3000), 'Start-up reaping'));
});
afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await api?.stop();
});

describe('a worker starting while a live worker’s heartbeat is still stale from an outage', () => {
  it('leaves that worker’s execution running: it completes with its outputs instead of ending "stopped unexpectedly"', async () => {
    const first = await startTestApp({ mode: 'worker', database: api.database, env: workerEnv });
    workers.push(first);
    const executionId = await execute();
    await until('the execution runs', async () => (await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status === 'running');

    // What an outage leaves: the live worker's heartbeat older than the stale period, for as long
    // as the second worker takes to start (its own first beat is an insert, which lands).
    await sqlAsOwner(`
      begin;
      update worker_heartbeats set last_seen_at = now() - interval '1 minute';
      create function test_heartbeats_frozen() returns trigger language plpgsql as $$ begin new.last_seen_at := old.last_seen_at; return new; end $$;
      create trigger test_heartbeats_frozen before update on worker_heartbeats for each row execute function test_heartbeats_frozen();
      commit;
    `);
    try {
      workers.push(await startTestApp({ mode: 'worker', database: api.database, env: workerEnv }));
    } finally {
      // The database is back for everyone: the live worker beats again at its next turn.
      await sqlAsOwner('drop trigger test_heartbeats_frozen on worker_heartbeats; drop function test_heartbeats_frozen()');
    }

    const done = await waitForExecution(api.url, key, orgId, executionId, 20_000);
    expect(done.errorMessage).toBeNull();
    expect(done).toMatchObject({ status: 'completed', outputCount: 3 });
    expect(done.outputs).toHaveLength(3);
  }, 60_000);
});
