import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * An execution runs once, whichever of its jobs takes it. Re-adding its job (same key) while the
 * first one is locked by a worker that has not claimed the execution yet makes a second job; the
 * two must not both run the kit — APPLY would run twice, side by side.
 */
let api: TestApp;
let worker: TestApp | undefined;
let key: string;
let orgId: string;
let projectId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, sql, values);

// Slow enough that the second job is taken while the first run is still going.
const slowSpec = `function spec(context, kit) { var until = Date.now() + 2500; while (Date.now() < until) {} return { image: 'x' }; }`;

beforeAll(async () => {
  api = await startTestApp({ mode: 'api' });
  key = api.bootstrap.apiKey;
  orgId = api.bootstrap.organizationId;
  const kit = sampleKit({ id: 'slow-starter' });
  kit.files['hooks/spec.js'] = slowSpec;
  expect((await call(api.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
  projectId = (await call(api.url, '/api/projects', { apiKey: key, body: { name: 'Claims' } })).body.data.id;
});
afterAll(async () => {
  await worker?.stop();
  await api?.stop();
});

const runsOf = (app: TestApp, executionId: string) => app.logLines.filter((line) => line.msg === 'kit execution finished' && line.executionId === executionId).length;

describe('an execution whose job is added again before the first job claims it', () => {
  it('runs once: the job that claimed it keeps it, and the first job finds nothing to do', async () => {
    const started = await call(api.url, `/api/${orgId}/kits/slow-starter/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    expect(started.status, started.text).toBe(201);
    const { executionId, workerRunId } = started.body.data;
    // A worker has locked the first job and not yet claimed the execution; its job is added again meanwhile.
    await sqlAsOwner(`update graphile_worker._private_jobs set locked_at = now(), locked_by = 'a-slow-worker' where id = $1`, [workerRunId]);
    const [readded] = await sqlAsOwner(`select (graphile_worker.add_job('kits.execute', json_build_object('executionId', $1::text, 'tenantId', $2::text), job_key => $3)).id`, [
      executionId,
      api.bootstrap.tenantId,
      `kit-execution:${executionId}`,
    ]);
    expect(String(readded.id)).not.toBe(workerRunId);

    worker = await startTestApp({ mode: 'worker', database: api.database, env: { WORKER_HEARTBEAT_MS: '500' } });
    const deadline = Date.now() + 10_000;
    while ((await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status === 'pending' && Date.now() < deadline) await sleep(20);
    // The slow worker goes on with the first job, which it holds, while the run is still going (here
    // the job is handed to the running worker instead: add_job ended its retries, not its attempt).
    await sqlAsOwner(`update graphile_worker._private_jobs set locked_at = null, locked_by = null, attempts = 0 where id = $1`, [workerRunId]);

    expect((await waitForExecution(api.url, key, orgId, executionId)).status).toBe('completed');
    const jobsDone = Date.now() + 10_000;
    while ((await countRows(api.database.ownerUrl, `graphile_worker.jobs where task_identifier = 'kits.execute'`)) > 0 && Date.now() < jobsDone) await sleep(50);
    expect(runsOf(worker, executionId)).toBe(1);
  });
});

describe("an execution's job", () => {
  it('gets 8 attempts with growing pauses (about half an hour), not graphile-worker\'s 25 (days of "running")', async () => {
    // No worker runs now, so the job waits where it can be read.
    await worker?.stop();
    worker = undefined;
    const started = await call(api.url, `/api/${orgId}/kits/slow-starter/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    expect(started.status, started.text).toBe(201);
    const [job] = await sqlAsOwner('select max_attempts, key from graphile_worker.jobs where id = $1', [started.body.data.workerRunId]);
    expect(job).toEqual({ max_attempts: 8, key: `kit-execution:${started.body.data.executionId}` });
  });
});
