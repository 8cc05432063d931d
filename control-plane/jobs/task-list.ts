import type { JobHelpers, Task, TaskList } from 'graphile-worker';
import { z } from 'zod';
import type { JobDefinition, JobDeps } from './job-definition.ts';
import { jobFields } from './worker-logger.ts';
import { rotateCredentialKeysJob } from '../domains/kit-credentials/rotate-credential-keys.job.ts';
import { reapInterruptedExecutionsJob } from '../domains/kit-executions/kit-execution-reaper.job.ts';
import { bundleExecutionJob } from '../domains/kit-executions/kit-bundle.job.ts';
import { executeKitJob } from '../domains/kit-executions/kit-execution.job.ts';
import { failStrandedAgentExecutionsJob } from '../domains/agents/fail-stranded-agent-executions.job.ts';
import { generateSpecJob } from '../domains/agents/generate-spec.job.ts';
import { compileSpecificationJob } from '../domains/specifications/compile-specification.job.ts';
import { failStrandedSpecificationsJob } from '../domains/specifications/fail-stranded-specifications.job.ts';
import { purgeExpiredRateLimits, pruneWorkerHeartbeats } from './maintenance.jobs.ts';

/** Every job the worker knows. Adding a domain's jobs means adding them here. */
export const jobDefinitions: JobDefinition<any>[] = [
  purgeExpiredRateLimits,
  pruneWorkerHeartbeats,
  executeKitJob,
  bundleExecutionJob,
  reapInterruptedExecutionsJob,
  rotateCredentialKeysJob,
  compileSpecificationJob,
  failStrandedSpecificationsJob,
  generateSpecJob,
  failStrandedAgentExecutionsJob,
];

export type JobName = (typeof jobDefinitions)[number]['name'];

export function findJobDefinition(name: string): JobDefinition<unknown> | undefined {
  return jobDefinitions.find((definition) => definition.name === name);
}

/** Wraps each definition so its payload is parsed at run time before the handler sees it. */
export function createTaskList(deps: JobDeps): TaskList {
  const tasks: Record<string, Task> = {};
  for (const definition of jobDefinitions) {
    tasks[definition.name] = async (rawPayload, helpers) => {
      const parsed = definition.payload.safeParse(rawPayload ?? {});
      if (!parsed.success) {
        // The handler never sees a payload that does not parse; the attempt fails with a clear error,
        // which graphile-worker logs (once) with the job's fields. No retry can parse it either.
        await makeThisAttemptTheLast(helpers);
        throw new Error(`Invalid payload for ${definition.name}: ${z.prettifyError(parsed.error)}`);
      }
      // The fields graphile-worker's own lines carry for the job, so one run reads as one.
      const log = deps.log.child({ component: 'worker', ...jobFields({}, helpers.job) });
      await definition.run(parsed.data, { ...deps, log }, helpers);
    };
  }
  return tasks;
}

/**
 * Ends a job's attempts with this one, which is about to fail: graphile-worker keeps it as failed
 * for good (attempts = max_attempts, with its last error) instead of retrying it, by default 25
 * times over about three days, and logs its failure as the last attempt's, an error.
 */
async function makeThisAttemptTheLast(helpers: JobHelpers): Promise<void> {
  const { job } = helpers;
  await helpers.withPgClient((client) =>
    client.query('update graphile_worker._private_jobs set max_attempts = attempts where id = $1 and locked_by = $2', [job.id, job.locked_by]),
  );
  job.max_attempts = job.attempts;
}
