import { z } from 'zod';
import { defineJob, type JobDeps } from '../../jobs/job-definition.ts';
import { forceUnlockJobPools, takeJobPoolsOfDeadWorkers } from '../../jobs/worker-heartbeat.repository.ts';
import { failExecutionsOfDeadWorkers } from './kit-execution-worker.repository.ts';

/**
 * Deals with workers that died (SIGKILL, crash, lost machine): executions they were running end as
 * failed, and every job they had locked — an execution not yet claimed, a bundle being built, any
 * other — is unlocked so another worker takes it now instead of after graphile-worker's 4-hour
 * lock timeout. A released job whose execution already ended does nothing. Every worker runs it at
 * start and then every stale period; the job form lets an operator trigger it by hand.
 */
export async function reapInterruptedExecutions(deps: Pick<JobDeps, 'ownerDb' | 'log' | 'workerStaleAfterMs'>): Promise<number> {
  // One transaction: no worker can take a released job before the failed executions are visible.
  const { failed, deadPools } = await deps.ownerDb.transaction().execute(async (trx) => {
    const failed = await failExecutionsOfDeadWorkers(trx, deps.workerStaleAfterMs);
    const deadPools = await takeJobPoolsOfDeadWorkers(trx, deps.workerStaleAfterMs);
    // A failed execution names its job's pool too, which covers a heartbeat already pruned.
    const lockedBy = failed.map((row) => row.locked_by).filter((id): id is string => id !== null);
    await forceUnlockJobPools(trx, [...new Set([...deadPools, ...lockedBy])]);
    return { failed, deadPools };
  });
  for (const jobPoolId of deadPools) deps.log.warn({ jobPoolId }, 'released the jobs of a dead worker');
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
