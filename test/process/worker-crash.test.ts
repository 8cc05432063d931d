import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { startMainProcess, untilOutput, type MainProcess } from '../helpers/main-process.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { lockTableUntilReleased, type TableLockGate } from '../helpers/table-lock-gate.ts';
import { until } from '../helpers/until.ts';

let api: TestApp;
let key: string;
let orgId: string;
let projectId: string;
const workers: MainProcess[] = [];
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, sql, values);

/**
 * A worker judged dead after 3 s of silence (beats every second). Judging waits until the judge's
 * own beats have been steady for a whole stale period; with beats every 200 ms a loaded machine
 * makes a gap (a beat 100 ms late or 200 ms slow) often enough to put judging off for many seconds.
 */
const REAPING_WORKER_ENV = { WORKER_HEARTBEAT_MS: '1000', WORKER_STALE_AFTER_MS: '3000' };

async function startWorkerProcess(): Promise<MainProcess> {
  const worker = startMainProcess('worker', {
    DATABASE_URL: api.database.ownerUrl,
    APP_DATABASE_URL: api.database.appUrl,
    SERVER_SECRET: TEST_SERVER_SECRET,
    DATA_DIR: await scratchDir('crash'),
    ...REAPING_WORKER_ENV,
    LOG_LEVEL: 'info',
  });
  workers.push(worker);
  // This worker's own start: a dead worker's heartbeat row may still be there.
  await untilOutput(worker, /worker started/, 30_000);
  return worker;
}

async function stopWorkerProcess(worker: MainProcess): Promise<void> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  worker.child.kill('SIGTERM');
  await worker.exit;
}

/**
 * Starts an execution of the crash kit and holds its outcome behind a lock on kit_outputs: the run
 * has finished, its execution is still "running", while `meanwhile` plays the scenario; then lets go.
 */
async function executeWhileOutcomeIsHeld(meanwhile: (executionId: string, outputs: TableLockGate) => Promise<void>): Promise<string> {
  const outputs = await lockTableUntilReleased(api.database.ownerUrl, 'kit_outputs');
  try {
    const started = await call(api.url, `/api/${orgId}/kits/crash-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    const executionId: string = started.body.data.executionId;
    await outputs.untilWaitedOn('the worker stores the outcome');
    await meanwhile(executionId, outputs);
    return executionId;
  } finally {
    await outputs.release();
  }
}

const executeJobCount = () => countRows(api.database.ownerUrl, `graphile_worker.jobs where task_identifier = 'kits.execute'`);

beforeAll(async () => {
  api = await startTestApp({ mode: 'api' });
  key = api.bootstrap.apiKey;
  orgId = api.bootstrap.organizationId;
  // A quick kit: a test keeps an execution "running" by holding the lock its outputs are stored
  // under (lockTableUntilReleased). A PLAN kept busy for 1.5 s raced the test's polls, its kill, and
  // the run's 5 s time limit.
  expect((await call(api.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'crash-kit' }) })).status).toBe(201);
  projectId = (await call(api.url, '/api/projects', { apiKey: key, body: { name: 'Crashy' } })).body.data.id;
});
afterAll(async () => {
  for (const worker of workers) worker.killNow();
  await api?.stop();
});

describe('a job added again while its execution is running', () => {
  it('does not run the execution twice', async () => {
    const worker = await startWorkerProcess();
    let before: unknown;
    // The execution stays "running" until the second job is done.
    const executionId = await executeWhileOutcomeIsHeld(async (id) => {
      [before] = await sqlAsOwner('select started_at, worker_process_id from kit_executions where id = $1', [id]);
      // A second job for the same execution, picked up by the worker's second slot while the first runs.
      const [duplicate] = await sqlAsOwner(`select id from graphile_worker.add_job('kits.execute', json_build_object('executionId', $1::text, 'tenantId', $2::text))`, [id, api.bootstrap.tenantId]);
      await until('the worker has done the second job', async () => (await countRows(api.database.ownerUrl, 'graphile_worker.jobs where id = $1', [duplicate.id])) === 0, 30_000);
    });
    const done = await waitForExecution(api.url, key, orgId, executionId, 30_000);
    expect(done.status).toBe('completed');
    expect(done.outputs).toHaveLength(3);
    const [after] = await sqlAsOwner('select started_at, worker_process_id from kit_executions where id = $1', [executionId]);
    expect(after).toEqual(before);
    await until('no execution job is left', async () => (await executeJobCount()) === 0, 30_000);
    expect(await sqlAsOwner('select output_id, count(*) from kit_outputs where execution_id = $1 group by 1 having count(*) > 1', [executionId])).toEqual([]);
    expect((await waitForExecution(api.url, key, orgId, executionId)).phases.filter((p: { phase: string }) => p.phase === 'PLAN')).toHaveLength(1);
    await stopWorkerProcess(worker);
    await sqlAsOwner('delete from worker_heartbeats');
  }, 120_000);
});

describe('a worker stopped with SIGTERM mid-execution', () => {
  it('finishes the running execution, then exits cleanly', async () => {
    const worker = await startWorkerProcess();
    // The run's outcome waits until the worker is shutting down.
    const executionId = await executeWhileOutcomeIsHeld(async () => {
      worker.child.kill('SIGTERM');
      await untilOutput(worker, /shutting down/, 30_000);
    });
    const exitCode = await worker.exit;
    expect(exitCode).toBe(0);
    // By the time the process is gone, the execution it held has ended — nothing left "running".
    const [row] = await sqlAsOwner('select status from kit_executions where id = $1', [executionId]);
    expect(row.status).toBe('completed');
    expect(await sqlAsOwner('select worker_id from worker_heartbeats')).toEqual([]);
  }, 120_000);
});

describe('a worker killed with SIGKILL mid-execution', () => {
  it('leaves the execution failed with a clear message (never stuck running, no outputs), and the next worker carries on', async () => {
    const first = await startWorkerProcess();
    // The worker dies with its execution "running".
    const executionId = await executeWhileOutcomeIsHeld(async (_executionId, outputs) => {
      first.killNow();
      await first.exit;
      // Its store still waits in PostgreSQL, which would notice the dead client only on replying;
      // end it as a lost connection ends, so it cannot land after we let go.
      await outputs.endWaiters();
    });

    await startWorkerProcess();
    const ended = await waitForExecution(api.url, key, orgId, executionId, 45_000);
    expect(ended.status).toBe('failed');
    expect(ended.errorMessage).toMatch(/worker running this execution stopped unexpectedly/);
    expect(ended.outputs).toEqual([]);
    // The killed job was released and finished as a no-op rather than waiting hours for its lock.
    await until('the interrupted job is no longer queued', async () => (await executeJobCount()) === 0, 30_000);
    expect((await waitForExecution(api.url, key, orgId, executionId)).status).toBe('failed');

    const again = await call(api.url, `/api/${orgId}/kits/crash-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    const second = await waitForExecution(api.url, key, orgId, again.body.data.executionId, 30_000);
    expect(second.status).toBe('completed');
    expect(second.outputs).toHaveLength(3);
    const duplicates = await sqlAsOwner('select execution_id, output_id, count(*) from kit_outputs group by 1, 2 having count(*) > 1');
    expect(duplicates).toEqual([]);
  }, 150_000);
});

describe('a worker killed with SIGKILL after locking a job, before claiming its execution', () => {
  it('has its job released once its heartbeat is stale, so another worker runs the execution instead of it staying pending for hours', async () => {
    for (const worker of workers) await stopWorkerProcess(worker);
    const started = await call(api.url, `/api/${orgId}/kits/crash-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
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
      await until(
        'the worker has locked the job and waits to claim its execution',
        async () => (await executeJob())?.locked_by != null && (await sqlAsOwner(waitingOnBlocker, [blockerPid])).length > 0,
        30_000,
      );
      // The heartbeat names the pool graphile-worker locked the job with: how the reaper finds it.
      const lockedBy = (await executeJob())!.locked_by;
      expect(await countRows(api.database.ownerUrl, 'worker_heartbeats where job_pool_id = $1', [lockedBy])).toBe(1);
      doomed.killNow();
      await doomed.exit;
      // Its claim still waits in PostgreSQL, which would notice the dead client only on replying;
      // end it as a lost connection ends, so it cannot land after we let go.
      await sqlAsOwner('select pg_terminate_backend(pid, 10000) from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [blockerPid]);
      await blocker.query('rollback');
    } finally {
      await blocker.end();
    }
    // The state the crash leaves: the execution never started, its job locked by a dead worker.
    expect((await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status).toBe('pending');
    expect((await executeJob())?.locked_by).not.toBeNull();

    await startWorkerProcess();
    // Polled in the database: the API's rate limit is not what this test is about.
    const endDeadline = Date.now() + 45_000;
    while (['pending', 'running'].includes((await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status)) {
      if (Date.now() > endDeadline) throw new Error(`execution still ${(await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status}; its job: ${JSON.stringify(await executeJob())}`);
      await sleep(100);
    }
    const ended = await waitForExecution(api.url, key, orgId, executionId);
    expect(ended.status).toBe('completed');
    expect(ended.outputs).toHaveLength(3);
    expect(ended.phases.filter((p: { phase: string }) => p.phase === 'PLAN')).toHaveLength(1);
    await until('the released job is no longer queued', async () => (await executeJob()) === undefined, 30_000);
  }, 150_000);
});
