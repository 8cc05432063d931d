import { setTimeout as sleep } from 'node:timers/promises';
import { Logger, run, type Runner } from 'graphile-worker';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reapInterruptedExecutions } from '../../control-plane/domains/kit-executions/kit-execution-reaper.job.ts';
import { createDatabase, type DatabaseHandle } from '../../control-plane/db/kysely-client.ts';
import { createLogger } from '../../control-plane/logger.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

let owner: DatabaseHandle;
const runners: Runner[] = [];
// Held jobs finish when the test ends (an unlocked one may be taken again then: that ends too).
const { promise: testEnded, resolve: endTest } = Promise.withResolvers<void>();
const log = createLogger('silent');

beforeAll(async () => {
  owner = createDatabase((await createTestDatabase()).ownerUrl);
});
afterAll(async () => {
  endTest();
  for (const runner of runners) await runner.stop();
  await owner?.db.destroy();
});

const lockOf = async (jobId: string) =>
  (await sql<{ locked_by: string | null }>`select locked_by from graphile_worker.jobs where id = ${jobId}`.execute(owner.db)).rows[0]?.locked_by;

/** A graphile-worker pool (one slot) that takes the given job and holds it until the test ends. */
async function poolHolding(jobId: string): Promise<string> {
  runners.push(
    await run({
      pgPool: owner.pool,
      concurrency: 1,
      noHandleSignals: true,
      pollInterval: 50,
      logger: new Logger(() => () => {}),
      taskList: { 'test.hold': () => testEnded },
    }),
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lockedBy = await lockOf(jobId);
    if (lockedBy) return lockedBy;
    if (Date.now() > deadline) throw new Error(`job ${jobId} was never locked`);
    await sleep(20);
  }
}

async function addHoldJob(): Promise<string> {
  const { rows } = await sql<{ id: string }>`select (graphile_worker.add_job('test.hold', '{}'::json)).id::text as id`.execute(owner.db);
  return rows[0]!.id;
}

describe('the reaper, for jobs locked by workers', () => {
  it('unlocks the jobs of a worker whose heartbeat is stale, once, and leaves a live worker’s jobs locked', async () => {
    const deadJob = await addHoldJob();
    const deadPool = await poolHolding(deadJob);
    const liveJob = await addHoldJob();
    const livePool = await poolHolding(liveJob);
    expect(livePool).not.toBe(deadPool);
    await sql`insert into worker_heartbeats (worker_id, last_seen_at, job_pool_id)
              values ('worker-dead', now() - interval '1 minute', ${deadPool}), ('worker-live', now(), ${livePool})`.execute(owner.db);

    await reapInterruptedExecutions({ ownerDb: owner.db, log, workerStaleAfterMs: 5_000 });

    expect(await lockOf(deadJob)).toBeNull();
    expect(await lockOf(liveJob)).toBe(livePool);
    const heartbeats = await sql<{ worker_id: string; job_pool_id: string | null }>`select worker_id, job_pool_id from worker_heartbeats order by worker_id`.execute(owner.db);
    // The dead worker's row stays (health still shows when it was last seen); its pool is handed out once.
    expect(heartbeats.rows).toEqual([
      { worker_id: 'worker-dead', job_pool_id: null },
      { worker_id: 'worker-live', job_pool_id: livePool },
    ]);
  });
});
