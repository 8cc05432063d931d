import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineJob, type JobDeps } from '../../jobs/job-definition.ts';
import { failAgentExecution } from './agents.repository.ts';
import { runAgentExecution } from './run-agent-execution.ts';

/** How many times a run is tried (a provider's timeout or 5xx) before its execution ends failed. */
export const AGENT_JOB_ATTEMPTS = 3;

/** An execution's run is keyed by it: a resume replaces the spent job of its failure. */
export const agentJobKey = (executionId: string) => `agent-execution:${executionId}`;

/**
 * Runs an agent execution (run-agent-execution.ts). The last failed attempt fails the execution
 * with a checkpoint, so it never stays "running" and can be resumed once the provider is back.
 */
export const generateSpecJob = defineJob({
  name: 'agents.generate_spec',
  payload: z.object({ executionId: z.uuid(), tenantId: z.uuid() }),
  async run({ executionId, tenantId }, deps: JobDeps, helpers) {
    try {
      await runAgentExecution({ ownerDb: deps.ownerDb, log: deps.log, ...deps.agents, signal: helpers.abortSignal }, tenantId, executionId);
    } catch (error) {
      if (helpers.job.attempts >= helpers.job.max_attempts) {
        await failAgentExecution(deps.ownerDb, executionId, {
          code: 'agent_error',
          message: `The run failed ${helpers.job.attempts} times; resume it from its checkpoint (the worker log has the reason under this executionId)`,
          checkpoint: randomUUID(),
        });
      }
      throw error;
    }
  },
});
