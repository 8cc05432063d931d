import { z } from 'zod';
import { defineJob, type JobDeps } from '../../jobs/job-definition.ts';
import { forceUnlockJobPools, takeJobPoolsOfDeadWorkers } from '../../jobs/worker-heartbeat.repository.ts';
import { recordBundlesNoJobWillBuild } from './kit-bundle.repository.ts';
import { failExecutionsNoJobWillFinish, failExecutionsNoJobWillStart, failExecutionsOfDeadWorkers, ownHeartbeatIsFresh } from './kit-execution-worker.repository.ts';

/**
 * Deals with workers that died (SIGKILL, crash, lost machine): executions they were running end as
 * failed, and every job they had locked — an execution not yet claimed, a bundle being built, any
 * other — is unlocked so another worker takes it now instead of after graphile-worker's 4-hour
 * lock timeout. A released job whose execution already ended does nothing. An execution whose job
 * used its last attempt without recording even its failure, or ended (or was removed) without
 * starting it, ends failed too, whoever is alive; so does a bundle whose job did the same. Every
 * worker runs it every stale period, from its first; the job form lets an operator trigger it by hand.
 */
export async function reapInterruptedExecutions(
  deps: Pick<JobDeps, 'ownerDb' | 'log' | 'workerStaleAfterMs'> & Partial<Pick<JobDeps, 'workerProcessId' | 'beatingSteadilyFor'>>,
): Promise<number> {
  // A reaper whose own worker could not beat lately (the database restarted, or was out of reach,
  // or the process was paused) sees every heartbeat stale, live workers' and its own alike: silence
  // is no sign of death then. It judges once its own beats have landed, in time, for a whole stale
  // period: every live worker (beating at least twice a period) has beaten again by then. Its own
  // heartbeat in the database, should it read as dead by the same rule, says so too.
  const steady = deps.beatingSteadilyFor?.(deps.workerStaleAfterMs) ?? true;
  // One transaction: no worker can take a released job before the failed executions are visible.
  const { failed, deadPools, unfinishable, unbuilt, postponed } = await deps.ownerDb.transaction().execute(async (trx) => {
    if (!steady || (deps.workerProcessId !== undefined && !(await ownHeartbeatIsFresh(trx, deps.workerProcessId, deps.workerStaleAfterMs)))) {
      return { failed: [], deadPools: [], unfinishable: [], unbuilt: [], postponed: true };
    }
    const unfinishable = [...(await failExecutionsNoJobWillStart(trx)), ...(await failExecutionsNoJobWillFinish(trx))];
    const unbuilt = await recordBundlesNoJobWillBuild(trx);
    const failed = await failExecutionsOfDeadWorkers(trx, deps.workerStaleAfterMs);
    const deadPools = await takeJobPoolsOfDeadWorkers(trx, deps.workerStaleAfterMs);
    // A failed execution names its job's pool too, which covers a heartbeat already pruned.
    const lockedBy = failed.map((row) => row.locked_by).filter((id): id is string => id !== null);
    await forceUnlockJobPools(trx, [...new Set([...deadPools, ...lockedBy])]);
    return { failed, deadPools, unfinishable, unbuilt, postponed: false };
  });
  if (postponed) deps.log.info({ workerId: deps.workerProcessId }, 'this worker has not reached the database lately; judging other workers at the next turn');
  for (const jobPoolId of deadPools) deps.log.warn({ jobPoolId }, 'released the jobs of a dead worker');
  for (const row of unfinishable) deps.log.warn({ executionId: row.id }, 'execution left pending or running by a job that will not run again; marked failed');
  for (const row of unbuilt) deps.log.warn({ executionId: row.id }, 'execution bundle left building after its job\'s last attempt; marked failed');
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
