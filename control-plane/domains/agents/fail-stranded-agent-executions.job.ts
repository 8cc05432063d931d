import { z } from 'zod';
import { defineJob } from '../../jobs/job-definition.ts';
import { failStrandedAgentExecutions } from './agents.repository.ts';

/** An execution running this long with no call recorded and no job left to run it never will. */
export const STRANDED_AFTER_MINUTES = 10;

/**
 * Ends `failed`, with a checkpoint, the agent executions no job will ever run again: the worker
 * died during the last attempt, or marking the last failure failed itself. Runs every few minutes
 * on one worker (graphile-worker's cron).
 */
export const failStrandedAgentExecutionsJob = defineJob({
  name: 'agents.fail_stranded',
  payload: z.object({}).passthrough(),
  async run(_payload, { ownerDb, log }) {
    const failed = await failStrandedAgentExecutions(ownerDb, STRANDED_AFTER_MINUTES);
    if (failed > 0) log.warn({ failed }, 'agent executions left running with no job to run them ended failed');
  },
});
