import { z } from 'zod';
import { defineJob } from '../../jobs/job-definition.ts';
import { failStrandedSpecifications } from './specifications.repository.ts';

/** A compile takes well under a second; one still compiling this long after it was asked for, with no job left to run it, never will. */
export const STRANDED_AFTER_MINUTES = 5;

/**
 * Ends `failed` the specifications no job will ever compile: the worker died during the last
 * attempt, or marking the last failure failed itself. Without this they would read `compiling`
 * for good. Runs every few minutes on one worker (graphile-worker's cron).
 */
export const failStrandedSpecificationsJob = defineJob({
  name: 'specifications.fail_stranded',
  payload: z.object({}).passthrough(),
  async run(_payload, { ownerDb, log }) {
    const failed = await failStrandedSpecifications(ownerDb, STRANDED_AFTER_MINUTES);
    if (failed > 0) log.warn({ failed }, 'specifications left compiling with no job to compile them ended failed');
  },
});
