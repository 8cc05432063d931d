import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { startMainProcess } from '../helpers/main-process.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

let api: TestApp;
let key: string;
let orgId: string;
let projectId: string;
const workers: ChildProcess[] = [];
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, sql, values);

// PLAN takes ~1.5 s of busy work: long enough to be killed in the middle of, well within the time limit.
const slowPlan = `
function plan() {
  var until = Date.now() + 1500;
  while (Date.now() < until) {}
  return {};
}
`;

async function startWorkerProcess(): Promise<ChildProcess> {
  const { child, output } = startMainProcess('worker', {
    DATABASE_URL: api.database.ownerUrl,
    APP_DATABASE_URL: api.database.appUrl,
    SERVER_SECRET: TEST_SERVER_SECRET,
    DATA_DIR: await scratchDir('crash'),
    WORKER_HEARTBEAT_MS: '200',
    WORKER_STALE_AFTER_MS: '1000',
    LOG_LEVEL: 'warn',
  });
  workers.push(child);
  const deadline = Date.now() + 30_000;
  while ((await countRows(api.database.ownerUrl, 'worker_heartbeats')) === 0 || child.exitCode !== null) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start:\n${output()}`);
    await sleep(50);
  }
  return child;
}

async function stopWorkerProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function waitUntilRunning(executionId: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while ((await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status !== 'running') {
    if (Date.now() > deadline) throw new Error('execution never started');
    await sleep(20);
  }
}

beforeAll(async () => {
  api = await startTestApp({ mode: 'api' });
  key = api.bootstrap.apiKey;
  orgId = api.bootstrap.organizationId;
  const kit = sampleKit({ id: 'slow-kit' });
  kit.manifest.hooks.PLAN = 'hooks/plan.js';
  kit.files['hooks/plan.js'] = slowPlan;
  expect((await call(api.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
  projectId = (await call(api.url, '/api/projects', { apiKey: key, body: { name: 'Crashy' } })).body.data.id;
});
afterAll(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  await api?.stop();
});

describe('a job added again while its execution is running', () => {
  it('does not run the execution twice', async () => {
    const worker = await startWorkerProcess();
    const started = await call(api.url, `/api/${orgId}/kits/slow-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    const executionId = started.body.data.executionId;
    await waitUntilRunning(executionId);
    const [before] = await sqlAsOwner('select started_at, worker_process_id from kit_executions where id = $1', [executionId]);
    // A second job for the same execution, picked up by the worker's second slot while the first runs.
    await sqlAsOwner(`select graphile_worker.add_job('kits.execute', json_build_object('executionId', $1::text, 'tenantId', $2::text))`, [executionId, api.bootstrap.tenantId]);
    const done = await waitForExecution(api.url, key, orgId, executionId, 15_000);
    expect(done.status).toBe('completed');
    expect(done.outputs).toHaveLength(3);
    const [after] = await sqlAsOwner('select started_at, worker_process_id from kit_executions where id = $1', [executionId]);
    expect(after).toEqual(before);
    while ((await countRows(api.database.ownerUrl, `graphile_worker.jobs where task_identifier = 'kits.execute'`)) > 0) await sleep(50);
    expect(await sqlAsOwner('select output_id, count(*) from kit_outputs where execution_id = $1 group by 1 having count(*) > 1', [executionId])).toEqual([]);
    expect((await waitForExecution(api.url, key, orgId, executionId)).phases.filter((p: { phase: string }) => p.phase === 'PLAN')).toHaveLength(1);
    worker.kill('SIGTERM');
    await new Promise((resolve) => worker.once('exit', resolve));
    await sqlAsOwner('delete from worker_heartbeats');
  }, 60_000);
});

describe('a worker stopped with SIGTERM mid-execution', () => {
  it('finishes the running execution, then exits cleanly', async () => {
    const worker = await startWorkerProcess();
    const started = await call(api.url, `/api/${orgId}/kits/slow-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    const executionId = started.body.data.executionId;
    await waitUntilRunning(executionId);
    worker.kill('SIGTERM');
    const exitCode = await new Promise((resolve) => worker.once('exit', resolve));
    expect(exitCode).toBe(0);
    // By the time the process is gone, the execution it held has ended — nothing left "running".
    const [row] = await sqlAsOwner('select status from kit_executions where id = $1', [executionId]);
    expect(row.status).toBe('completed');
    expect(await sqlAsOwner('select worker_id from worker_heartbeats')).toEqual([]);
  }, 60_000);
});

describe('a worker killed with SIGKILL mid-execution', () => {
  it('leaves the execution failed with a clear message (never stuck running, no outputs), and the next worker carries on', async () => {
    const first = await startWorkerProcess();
    const started = await call(api.url, `/api/${orgId}/kits/slow-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    const executionId = started.body.data.executionId;
    await waitUntilRunning(executionId);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));

    await startWorkerProcess();
    const ended = await waitForExecution(api.url, key, orgId, executionId, 15_000);
    expect(ended.status).toBe('failed');
    expect(ended.errorMessage).toMatch(/worker running this execution stopped unexpectedly/);
    expect(ended.outputs).toEqual([]);
    // The killed job was released and finished as a no-op rather than waiting hours for its lock.
    const jobDeadline = Date.now() + 10_000;
    while ((await countRows(api.database.ownerUrl, `graphile_worker.jobs where task_identifier = 'kits.execute'`)) > 0) {
      if (Date.now() > jobDeadline) throw new Error('the interrupted job is still queued');
      await sleep(100);
    }
    expect((await waitForExecution(api.url, key, orgId, executionId)).status).toBe('failed');

    const again = await call(api.url, `/api/${orgId}/kits/slow-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    const second = await waitForExecution(api.url, key, orgId, again.body.data.executionId, 15_000);
    expect(second.status).toBe('completed');
    expect(second.outputs).toHaveLength(3);
    const duplicates = await sqlAsOwner('select execution_id, output_id, count(*) from kit_outputs group by 1, 2 having count(*) > 1');
    expect(duplicates).toEqual([]);
  }, 90_000);
});

describe('a worker killed with SIGKILL after locking a job, before claiming its execution', () => {
  it('has its job released once its heartbeat is stale, so another worker runs the execution instead of it staying pending for hours', async () => {
    for (const worker of workers) await stopWorkerProcess(worker);
    const started = await call(api.url, `/api/${orgId}/kits/slow-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    const executionId = started.body.data.executionId;
    // The only execution job queued (the earlier ones have finished).
    const executeJob = async () => (await sqlAsOwner(`select locked_by from graphile_worker.jobs where task_identifier = 'kits.execute'`))[0];

    // Holding the execution row stops the worker's claim: it locks the job, then waits on us.
    const blocker = new pg.Client({ connectionString: api.database.ownerUrl });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select id from kit_executions where id = $1 for update', [executionId]);
      const blockerPid = (await blocker.query('select pg_backend_pid() as pid')).rows[0].pid;
      const waitingOnBlocker = 'select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))';

      const doomed = await startWorkerProcess();
      const deadline = Date.now() + 15_000;
      while ((await executeJob())?.locked_by == null || (await sqlAsOwner(waitingOnBlocker, [blockerPid])).length === 0) {
        if (Date.now() > deadline) throw new Error('the worker never locked the job');
        await sleep(20);
      }
      // The heartbeat names the pool graphile-worker locked the job with: how the reaper finds it.
      const lockedBy = (await executeJob())!.locked_by;
      expect(await countRows(api.database.ownerUrl, 'worker_heartbeats where job_pool_id = $1', [lockedBy])).toBe(1);
      doomed.kill('SIGKILL');
      await new Promise((resolve) => doomed.once('exit', resolve));
      // Its claim still waits in PostgreSQL, which would notice the dead client only on replying;
      // end it as a lost connection ends, so it cannot land after we let go.
      await sqlAsOwner('select pg_terminate_backend(pid) from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [blockerPid]);
      await blocker.query('rollback');
    } finally {
      await blocker.end();
    }
    // The state the crash leaves: the execution never started, its job locked by a dead worker.
    expect((await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status).toBe('pending');
    expect((await executeJob())?.locked_by).not.toBeNull();

    await startWorkerProcess();
    // Polled in the database: the API's rate limit is not what this test is about.
    const endDeadline = Date.now() + 15_000;
    while (['pending', 'running'].includes((await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status)) {
      if (Date.now() > endDeadline) throw new Error(`execution still ${(await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status}; its job: ${JSON.stringify(await executeJob())}`);
      await sleep(100);
    }
    const ended = await waitForExecution(api.url, key, orgId, executionId);
    expect(ended.status).toBe('completed');
    expect(ended.outputs).toHaveLength(3);
    expect(ended.phases.filter((p: { phase: string }) => p.phase === 'PLAN')).toHaveLength(1);
    const jobDeadline = Date.now() + 5_000;
    while ((await executeJob()) !== undefined) {
      if (Date.now() > jobDeadline) throw new Error('the released job is still queued');
      await sleep(50);
    }
  }, 60_000);
});
