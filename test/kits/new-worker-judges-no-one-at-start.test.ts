import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
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
let projectId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, sql, values);
// Beats every 200 ms, judged dead after 1 s of silence; the reaper looks every second.
const workerEnv = { WORKER_HEARTBEAT_MS: '200', WORKER_STALE_AFTER_MS: '1000', RATE_LIMIT_GENERAL_PER_MINUTE: '10000' };

beforeAll(async () => {
  api = await startTestApp({ mode: 'api', env: { RATE_LIMIT_GENERAL_PER_MINUTE: '10000' } });
  key = api.bootstrap.apiKey;
  orgId = api.bootstrap.organizationId;
  // PLAN takes 3 s of busy work: time for the second worker to start while it runs.
  const kit = sampleKit({ id: 'slow-kit' });
  kit.manifest.hooks.PLAN = 'hooks/plan.js';
  kit.files['hooks/plan.js'] = 'function plan() { var until = Date.now() + 3000; while (Date.now() < until) {} return {}; }';
  expect((await call(api.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
  projectId = (await call(api.url, '/api/projects', { apiKey: key, body: { name: 'Start-up reaping' } })).body.data.id;
});
afterAll(async () => {
  for (const worker of workers) await worker.stop();
  await api?.stop();
});

describe('a worker starting while a live worker’s heartbeat is still stale from an outage', () => {
  it('leaves that worker’s execution running: it completes with its outputs instead of ending "stopped unexpectedly"', async () => {
    const first = await startTestApp({ mode: 'worker', database: api.database, env: workerEnv });
    workers.push(first);
    const started = await call(api.url, `/api/${orgId}/kits/slow-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    expect(started.status, started.text).toBe(201);
    const executionId = started.body.data.executionId as string;
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
