import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiWithKitAndProject, FAST_REAPING_WORKER_ENV, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { until } from '../helpers/until.ts';

/**
 * An execution's job that used its last attempt before it could claim the execution (the database
 * refusing every claim, say through a long outage), or that an operator removed, will never run
 * it. The execution must not read "pending" for ever: it ends failed, saying it never started.
 */
let api: TestApp;
let worker: TestApp | undefined;
let key: string;
let orgId: string;
let execute: () => Promise<string>;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, sql, values);
const workerEnv = FAST_REAPING_WORKER_ENV;
const neverStarted = 'This execution could not be started: its job ended without running it. No outputs were kept; start a new execution.';

beforeAll(async () => {
  ({ api, key, orgId, execute } = await apiWithKitAndProject(sampleKit({ id: 'plain-kit' }), 'Never started'));
});
afterAll(async () => {
  await worker?.stop();
  await api?.stop();
});

describe('an execution whose job failed its last attempt before claiming it', () => {
  it('ends failed, saying it never started — not "pending" for good', async () => {
    const executionId = await execute();
    // Its last attempt: the first (8 attempts would take half an hour).
    await sqlAsOwner(`update graphile_worker._private_jobs set max_attempts = 1 where key = $1`, [`kit-execution:${executionId}`]);
    // The database refuses the claim as a passing conflict would.
    await sqlAsOwner(`
      create function test_claim_refused() returns trigger language plpgsql as $$ begin raise exception 'conflict' using errcode = '40001'; end $$;
      create trigger test_claim_refused before update on kit_executions for each row when (new.status = 'running') execute function test_claim_refused();
    `);
    try {
      worker = await startTestApp({ mode: 'worker', database: api.database, env: workerEnv });
      await until('the last attempt has failed', async () => {
        const [job] = await sqlAsOwner(`select attempts, locked_at, last_error from graphile_worker.jobs where key = $1`, [`kit-execution:${executionId}`]);
        return job?.attempts === 1 && job.locked_at === null && job.last_error !== null;
      });
    } finally {
      await sqlAsOwner('drop trigger test_claim_refused on kit_executions; drop function test_claim_refused()');
    }
    const done = await waitForExecution(api.url, key, orgId, executionId, 10_000);
    expect(done).toMatchObject({ status: 'failed', errorMessage: neverStarted, outputs: [], bundleStatus: 'none' });
  }, 60_000);
});

describe('an execution whose job an operator removed before it ran', () => {
  it('ends failed, saying it never started', async () => {
    await worker?.stop();
    worker = undefined;
    const executionId = await execute();
    await sqlAsOwner(`select graphile_worker.remove_job($1)`, [`kit-execution:${executionId}`]);
    worker = await startTestApp({ mode: 'worker', database: api.database, env: workerEnv });
    const done = await waitForExecution(api.url, key, orgId, executionId, 10_000);
    expect(done).toMatchObject({ status: 'failed', errorMessage: neverStarted, outputs: [], bundleStatus: 'none' });
  }, 60_000);

  it('leaves an execution whose job is waiting alone: it runs and completes', async () => {
    const executionId = await execute();
    const done = await waitForExecution(api.url, key, orgId, executionId, 15_000);
    expect(done).toMatchObject({ status: 'completed', errorMessage: null });
  }, 30_000);
});
