import { sql } from 'kysely';
import { z } from 'zod';
import { defineJob, type JobDeps } from '../../jobs/job-definition.ts';
import { failExecutionsOfDeadWorkers } from './kit-execution-worker.repository.ts';

/**
 * Ends executions whose worker died mid-run (SIGKILL, crash, lost machine) as failed, and unlocks
 * that worker's jobs so they finish at once (they find the execution ended and do nothing) instead
 * of waiting hours for the lock to expire. Every worker runs it at start and then every stale
 * period; the job form lets an operator trigger it by hand.
 */
export async function reapInterruptedExecutions(deps: Pick<JobDeps, 'ownerDb' | 'log' | 'workerStaleAfterMs'>): Promise<number> {
  const failed = await failExecutionsOfDeadWorkers(deps.ownerDb, deps.workerStaleAfterMs);
  const lockedBy = [...new Set(failed.map((row) => row.locked_by).filter((id): id is string => id !== null))];
  if (lockedBy.length > 0) await sql`select graphile_worker.force_unlock_workers(${lockedBy}::text[])`.execute(deps.ownerDb);
  for (const row of failed) deps.log.warn({ executionId: row.id }, 'execution interrupted by a dead worker; marked failed');
  return failed.length;
}

export const reapInterruptedExecutionsJob = defineJob({
  name: 'kits.reap_interrupted_executions',
  payload: z.object({}).passthrough(),
  async run(_payload, deps) {
    await reapInterruptedExecutions(deps);
  },
});
