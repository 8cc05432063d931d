import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../control-plane/db/kysely-client.ts';
import { reapInterruptedExecutions } from '../../control-plane/domains/kit-executions/kit-execution-reaper.job.ts';
import { createLogger } from '../../control-plane/logger.ts';
import { apiWithKitAndProject, FAST_REAPING_WORKER_ENV, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { holdTableLock, untilLockWaiters } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { until } from '../helpers/until.ts';
import { freezeHeartbeatsStale, thawHeartbeats } from '../helpers/frozen-heartbeats.ts';

/**
 * A worker is judged dead when its heartbeat stops, and its execution then ends "failed … stopped
 * unexpectedly". Silence is not always death: after the database was away every heartbeat is
 * stale, and an execution whose outcome could not be recorded waits for its next attempt whether
 * or not the worker of the last one is still there. Neither may end as "stopped unexpectedly".
 */
let api: TestApp;
let worker: TestApp | undefined;
let key: string;
let orgId: string;
let execute: () => Promise<string>;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, sql, values);
const workerEnv = FAST_REAPING_WORKER_ENV;

beforeAll(async () => {
  // A quick kit: an execution is kept "running" for as long as a test needs by holding the lock its
  // outputs are stored under, not by a busy hook. A hook busy for seconds spent most of the run's
  // 5 s time limit, and on a loaded machine the run then failed "kit exceeded its time limit".
  ({ api, key, orgId, execute } = await apiWithKitAndProject(sampleKit({ id: 'heartbeat-kit' }), 'Heartbeats'));
});
afterAll(async () => {
  await worker?.stop();
  await api?.stop();
});

const statusOf = async (executionId: string) => (await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status;
/** The reaper as a worker runs it, called directly: one turn, when the test says. */
async function reapOnce(options: { workerStaleAfterMs: number; workerProcessId?: string; steady?: boolean }) {
  const owner = createDatabase(api.database.ownerUrl, { max: 1 });
  try {
    return await reapInterruptedExecutions({
      ownerDb: owner.db,
      log: createLogger('silent'),
      workerStaleAfterMs: options.workerStaleAfterMs,
      ...(options.workerProcessId === undefined ? {} : { workerProcessId: options.workerProcessId }),
      beatingSteadilyFor: () => options.steady ?? true,
    });
  } finally {
    await owner.db.destroy();
  }
}
const POSTPONED = 'this worker has not reached the database lately; judging other workers at the next turn';

describe('a live worker whose heartbeats did not land for a while (the database was away)', () => {
  it('keeps its execution: it completes with its outputs instead of ending "stopped unexpectedly"', async () => {
    worker = await startTestApp({ mode: 'worker', database: api.database, env: workerEnv });
    // Storing the outputs waits behind this lock: the run is over, its execution "running" until the
    // test lets it be recorded, however slow the machine (the reaper touches no output).
    const outputsLock = await holdTableLock(api.database.ownerUrl, 'kit_outputs');
    let released: Promise<void> | undefined;
    const releaseOutputs = () => (released ??= outputsLock());
    let executionId: string;
    try {
      executionId = await execute();
      await until('the execution runs', async () => (await statusOf(executionId)) === 'running');
      // What an outage leaves: every heartbeat older than the stale period, this worker's own too,
      // and (here for as long as the test needs) its beats not landing.
      await freezeHeartbeatsStale(api.database.ownerUrl);
      try {
        await untilLockWaiters(api.database.ownerUrl);
        const [{ worker_process_id: workerId }] = await sqlAsOwner('select worker_process_id from kit_executions where id = $1', [executionId]);
        // A turn of its reaper whose own beats were steady: only its stale heartbeat in the database
        // tells it that it has not reached the database lately.
        await reapOnce({ workerStaleAfterMs: 1_000, workerProcessId: workerId, steady: true });
        expect(await statusOf(executionId)).toBe('running');
        // And the worker's own reaper, turn after turn while the heartbeats stay stale.
        const from = worker.logLines.length;
        await until(
          'the worker’s reaper has looked twice with the heartbeats stale',
          async () => worker!.logLines.slice(from).filter((line) => line.msg === POSTPONED).length >= 2 || (await statusOf(executionId)) !== 'running',
        );
        expect(await statusOf(executionId)).toBe('running');
      } finally {
        await releaseOutputs();
      }
      const done = await waitForExecution(api.url, key, orgId, executionId, 20_000);
      expect(done.errorMessage).toBeNull();
      expect(done).toMatchObject({ status: 'completed', outputCount: 3 });
      expect(done.outputs).toHaveLength(3);
    } finally {
      await releaseOutputs();
      await thawHeartbeats(api.database.ownerUrl);
    }
    await worker.stop();
    worker = undefined;
  }, 60_000);
});

describe('an execution waiting for another attempt (its outcome could not be recorded) when its worker stops', () => {
  it('is run again by the next worker and completes, instead of ending "stopped unexpectedly"', async () => {
    worker = await startTestApp({ mode: 'worker', database: api.database, env: workerEnv });
    // Storing the outcome fails as a conflict would (a failure that may pass): the job tries again later.
    await sqlAsOwner(`
      create function test_outputs_conflict() returns trigger language plpgsql as $$ begin raise exception 'conflict' using errcode = '40001'; end $$;
      create trigger test_outputs_conflict before insert on kit_outputs for each row execute function test_outputs_conflict();
    `);
    let executionId: string;
    try {
      executionId = await execute();
      await until('the first attempt has failed', async () => {
        const [job] = await sqlAsOwner(`select attempts, last_error from graphile_worker.jobs where task_identifier = 'kits.execute'`);
        return job?.attempts === 1 && job.last_error !== null;
      });
      // The worker stops in order (a deploy, a restart) while the job waits for its next attempt.
      await worker.stop();
      worker = undefined;
    } finally {
      await sqlAsOwner('drop trigger test_outputs_conflict on kit_outputs; drop function test_outputs_conflict()');
    }
    expect(await statusOf(executionId)).toBe('running');
    // A reaper's turn now, whenever the next worker's own first turn comes: the worker of the last
    // attempt is gone (its heartbeat with it), and the execution still waits for the next attempt.
    await reapOnce({ workerStaleAfterMs: 1_000 });
    expect(await statusOf(executionId)).toBe('running');

    worker = await startTestApp({ mode: 'worker', database: api.database, env: workerEnv });
    const done = await waitForExecution(api.url, key, orgId, executionId, 30_000);
    expect(done.errorMessage).toBeNull();
    expect(done).toMatchObject({ status: 'completed', outputCount: 3 });
    expect(done.phases.filter((p: { phase: string }) => p.phase === 'PLAN')).toHaveLength(1);
  }, 60_000);
});

describe('an execution whose last attempt could record neither its outcome nor its failure', () => {
  it('ends failed, saying it could not be recorded, although its worker is alive — not "running" for good', async () => {
    await worker?.stop();
    worker = undefined;
    const executionId = await execute();
    // Its last attempt: the first (8 attempts would take half an hour).
    await sqlAsOwner(`update graphile_worker._private_jobs set max_attempts = 1 where key = $1`, [`kit-execution:${executionId}`]);
    // The database keeps failing the run as a conflict would: its outcome, then its failure.
    await sqlAsOwner(`
      create function test_refuse_for_now() returns trigger language plpgsql as $$ begin raise exception 'conflict' using errcode = '40001'; end $$;
      create trigger test_outputs_refused before insert on kit_outputs for each row execute function test_refuse_for_now();
      create trigger test_failure_refused before update on kit_executions for each row when (new.status = 'failed') execute function test_refuse_for_now();
    `);
    try {
      // Beats every 500 ms, judged after 2 s: what is asserted ignores heartbeats, and the reaper
      // judges only after a whole period of steady beats, which 200 ms beats on a loaded machine may
      // not give it for a long while (a beat 100 ms late or 200 ms slow is a gap).
      worker = await startTestApp({ mode: 'worker', database: api.database, env: { ...workerEnv, WORKER_HEARTBEAT_MS: '500', WORKER_STALE_AFTER_MS: '2000' } });
      await until('the last attempt has failed', async () => {
        const [job] = await sqlAsOwner(`select attempts, locked_at, last_error from graphile_worker.jobs where key = $1`, [`kit-execution:${executionId}`]);
        return job?.attempts === 1 && job.locked_at === null && job.last_error !== null;
      });
      expect(await statusOf(executionId)).toBe('running');
    } finally {
      await sqlAsOwner('drop trigger test_outputs_refused on kit_outputs; drop trigger test_failure_refused on kit_executions; drop function test_refuse_for_now()');
    }
    // The database is well again, the worker alive: nothing will run the execution any more.
    const done = await waitForExecution(api.url, key, orgId, executionId, 30_000);
    expect(done).toMatchObject({
      status: 'failed',
      errorMessage: 'This execution could not be recorded: recording it failed on each of its attempts. No outputs were kept; start a new execution.',
      outputs: [],
      bundleStatus: 'none',
    });
  }, 60_000);
});

describe('an execution whose next attempt another worker has taken but not yet begun, when the reaper looks', () => {
  it('is left to that attempt; only a job still held by the dead worker that ran it ends it "stopped unexpectedly"', async () => {
    await worker?.stop();
    worker = undefined;
    const executionId = await execute();
    const [job] = await sqlAsOwner(`select id::text as id from graphile_worker.jobs where key = $1`, [`kit-execution:${executionId}`]);
    // Its first attempt ran on a worker that has since stopped (its heartbeat is gone) and could not
    // record its outcome; a live worker has just locked the job for the second, and not yet claimed the run.
    await sqlAsOwner(
      `update kit_executions set status = 'running', started_at = now(), worker_run_id = $2, worker_process_id = 'worker-stopped', locked_by = 'pool-stopped' where id = $1`,
      [executionId, job.id],
    );
    await sqlAsOwner(`insert into worker_heartbeats (worker_id, last_seen_at, job_pool_id) values ('worker-retrying', now(), 'pool-retrying')`);
    await sqlAsOwner(`update graphile_worker._private_jobs set attempts = 2, locked_at = now(), locked_by = 'pool-retrying' where id = $1`, [job.id]);
    // 'worker-retrying' beat just now and must read as alive at both turns, however slowly the
    // statements between come: a stale period of a minute. 'worker-stopped' has no heartbeat at all,
    // dead by any period. (With 1 s, a turn over a second late took the live worker for dead and
    // released its job, and the second turn then found it waiting for its attempt.)
    const reap = () => reapOnce({ workerStaleAfterMs: 60_000 });
    try {
      await reap();
      expect(await statusOf(executionId)).toBe('running');
      const [held] = await sqlAsOwner(`select locked_by from graphile_worker.jobs where id = $1`, [job.id]);
      expect(held.locked_by).toBe('pool-retrying');

      // The same job held by the pool of the worker that ran it: that worker died mid-run.
      await sqlAsOwner(`update graphile_worker._private_jobs set locked_by = 'pool-stopped' where id = $1`, [job.id]);
      await reap();
      const [row] = await sqlAsOwner('select status, error_message from kit_executions where id = $1', [executionId]);
      expect(row).toEqual({ status: 'failed', error_message: 'The worker running this execution stopped unexpectedly; no outputs were kept. Start a new execution.' });
    } finally {
      await sqlAsOwner(`delete from graphile_worker._private_jobs where id = $1`, [job.id]);
      await sqlAsOwner(`delete from worker_heartbeats where worker_id = 'worker-retrying'`);
    }
  });
});

describe('a reaper whose own heartbeats had a gap within the last stale period', () => {
  it('judges nobody: a worker that could not beat either is not taken for dead until its own beats have been steady a whole period', async () => {
    await worker?.stop();
    worker = undefined;
    const executionId = await execute();
    const [job] = await sqlAsOwner(`select id::text as id from graphile_worker.jobs where key = $1`, [`kit-execution:${executionId}`]);
    // Running on a worker whose heartbeat is long stale, its job still held by that worker's pool.
    await sqlAsOwner(`insert into worker_heartbeats (worker_id, last_seen_at, job_pool_id) values ('worker-quiet', now() - interval '1 hour', 'pool-quiet')`);
    await sqlAsOwner(
      `update kit_executions set status = 'running', started_at = now(), worker_run_id = $2, worker_process_id = 'worker-quiet', locked_by = 'pool-quiet' where id = $1`,
      [executionId, job.id],
    );
    await sqlAsOwner(`update graphile_worker._private_jobs set locked_at = now(), locked_by = 'pool-quiet' where id = $1`, [job.id]);
    const owner = createDatabase(api.database.ownerUrl, { max: 1 });
    const reap = (steady: boolean) =>
      reapInterruptedExecutions({ ownerDb: owner.db, log: createLogger('silent'), workerStaleAfterMs: 1_000, beatingSteadilyFor: () => steady });
    try {
      await reap(false);
      expect(await statusOf(executionId)).toBe('running');
      // Its own beats steady for a period, and the other still silent: that one is dead.
      await reap(true);
      expect(await statusOf(executionId)).toBe('failed');
    } finally {
      await owner.db.destroy();
      await sqlAsOwner(`delete from graphile_worker._private_jobs where id = $1`, [job.id]);
      await sqlAsOwner(`delete from worker_heartbeats where worker_id = 'worker-quiet'`);
    }
  });
});
