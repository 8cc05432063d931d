import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { mainProcessesStoppedAfterAll, untilOutput } from '../helpers/main-process.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { lockTableUntilReleased } from '../helpers/table-lock-gate.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { until } from '../helpers/until.ts';

const startMain = mainProcessesStoppedAfterAll();

async function startedWorker(name: string) {
  const database = await createTestDatabase();
  const worker = startMain('worker', {
    DATABASE_URL: database.ownerUrl,
    SERVER_SECRET: TEST_SERVER_SECRET,
    DATA_DIR: await scratchDir(name),
    WORKER_CONCURRENCY: '1',
  });
  await untilOutput(worker, /worker started/, 30_000);
  return { database, worker };
}

/** A session waiting on a lock for a statement that contains `text`. */
const waitingOn = (text: string) => `pg_stat_activity where wait_event_type = 'Lock' and query like '%${text}%' and pid <> pg_backend_pid()`;

/**
 * graphile-worker records a job as done or failed without waiting for it: a connection lost
 * just then — a failover, a restart of PostgreSQL — was a failure nothing handled, and the worker
 * process shut down (with the API, in `all` mode), though its database was back a moment later.
 */
describe('a job whose completion loses its connection', () => {
  it('is recorded once the database answers again, and the worker stays up', async () => {
    const { database, worker } = await startedWorker('completion');

    // The job's own statement waits here: it is running when the jobs table is locked next.
    const rateLimits = await lockTableUntilReleased(database.ownerUrl, 'rate_limits');
    let jobs: Awaited<ReturnType<typeof lockTableUntilReleased>> | undefined;
    try {
      const [{ id }] = await ownerQuery(database.ownerUrl, "select (graphile_worker.add_job('maintenance.purge_expired_rate_limits', '{}'::json)).id::text as id");
      await rateLimits.untilWaitedOn('the job runs');
      jobs = await lockTableUntilReleased(database.ownerUrl, 'graphile_worker._private_jobs');
      await rateLimits.release();
      await until('the job is being recorded as done', async () => (await countRows(database.ownerUrl, waitingOn('delete from "graphile_worker"._private_jobs'))) >= 1, 20_000);
      await jobs.endWaiters();
      await jobs.release();

      await until('the job is recorded as done', async () => (await countRows(database.ownerUrl, 'graphile_worker.jobs where id = $1', [id])) === 0 || worker.child.exitCode !== null, 30_000);
      // A failure nothing handled is logged at once; a moment more lets a shutdown it began show.
      await sleep(1_000);
      expect(worker.output()).not.toMatch(/a failure nothing handled/);
      expect(worker.child.exitCode, worker.output()).toBeNull();
      expect(await countRows(database.ownerUrl, 'graphile_worker.jobs where id = $1', [id])).toBe(0);
    } finally {
      await rateLimits.release();
      await jobs?.release();
    }
  }, 90_000);
});

describe('a job whose failure loses its connection', () => {
  it('is recorded failed once the database answers again, and the worker stays up', async () => {
    const { database, worker } = await startedWorker('failure');

    const rateLimits = await lockTableUntilReleased(database.ownerUrl, 'rate_limits');
    let jobs: Awaited<ReturnType<typeof lockTableUntilReleased>> | undefined;
    try {
      // One attempt: once recorded failed, it stays so (no retry deletes it).
      const [{ id }] = await ownerQuery(database.ownerUrl, "select (graphile_worker.add_job('maintenance.purge_expired_rate_limits', '{}'::json, max_attempts => 1)).id::text as id");
      await rateLimits.untilWaitedOn('the job runs');
      jobs = await lockTableUntilReleased(database.ownerUrl, 'graphile_worker._private_jobs');
      // The job's statement is cancelled: the job fails, and its failure waits on the jobs table.
      await ownerQuery(database.ownerUrl, `select pg_cancel_backend(pid) from ${waitingOn('rate_limits')}`);
      await until('the job is being recorded as failed', async () => (await countRows(database.ownerUrl, waitingOn('last_error'))) >= 1, 20_000);
      await jobs.endWaiters();
      await jobs.release();
      await rateLimits.release();

      const recorded = 'graphile_worker.jobs where id = $1 and locked_at is null and last_error is not null';
      await until('the job is recorded as failed', async () => (await countRows(database.ownerUrl, recorded, [id])) === 1 || worker.child.exitCode !== null, 30_000);
      await sleep(1_000);
      expect(worker.output()).not.toMatch(/a failure nothing handled/);
      expect(worker.child.exitCode, worker.output()).toBeNull();
      const [job] = await ownerQuery(database.ownerUrl, 'select attempts, last_error, locked_at from graphile_worker.jobs where id = $1', [id]);
      expect(job).toMatchObject({ attempts: 1, locked_at: null });
      expect(job.last_error).toMatch(/canceling statement/);
    } finally {
      await rateLimits.release();
      await jobs?.release();
    }
  }, 90_000);
});
