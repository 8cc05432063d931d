import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiWithKitAndProject, FAST_REAPING_WORKER_ENV, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { holdTableLock } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { until } from '../helpers/until.ts';
import { freezeHeartbeatsStale, thawHeartbeats } from '../helpers/frozen-heartbeats.ts';

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
  // A quick kit: the test keeps its execution "running" by holding the lock its outputs are stored
  // under. (A PLAN busy for 3 s spent most of the run's 5 s time limit, and on a loaded machine the
  // run failed "kit exceeded its time limit"; or it ended before the second worker had started.)
  ({ api, key, orgId, execute } = await apiWithKitAndProject(sampleKit({ id: 'start-up-kit' }), 'Start-up reaping'));
});
afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await api?.stop();
});

describe('a worker starting while a live worker’s heartbeat is still stale from an outage', () => {
  it('leaves that worker’s execution running: it completes with its outputs instead of ending "stopped unexpectedly"', async () => {
    const first = await startTestApp({ mode: 'worker', database: api.database, env: workerEnv });
    workers.push(first);
    // Until released, the run waits to store its outputs (the reaper touches none): its execution
    // stays "running" for as long as the second worker takes to start, however slow the machine.
    const releaseOutputs = await holdTableLock(api.database.ownerUrl, 'kit_outputs');
    let executionId: string;
    try {
      executionId = await execute();
      await until('the execution runs', async () => (await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status === 'running');

      // What an outage leaves: the live worker's heartbeat older than the stale period, for as long
      // as the second worker takes to start (its own first beat is an insert, which lands).
      await freezeHeartbeatsStale(api.database.ownerUrl);
      try {
        workers.push(await startTestApp({ mode: 'worker', database: api.database, env: workerEnv }));
      } finally {
        // The database is back for everyone: the live worker beats again at its next turn.
        await thawHeartbeats(api.database.ownerUrl);
      }
      expect((await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status).toBe('running');
    } finally {
      await releaseOutputs();
    }

    const done = await waitForExecution(api.url, key, orgId, executionId, 20_000);
    expect(done.errorMessage).toBeNull();
    expect(done).toMatchObject({ status: 'completed', outputCount: 3 });
    expect(done.outputs).toHaveLength(3);
  }, 60_000);
});
