import { z } from 'zod';
import { defineJob, type JobDeps } from '../../jobs/job-definition.ts';
import { compileSpecification, type CompileInput, type CompileOptions } from './compile-specification.ts';
import { claimCompilingSpecification, completeSpecification, failSpecification } from './specifications.repository.ts';

/** How many times a compile is tried before its specification ends failed. */
export const COMPILE_JOB_ATTEMPTS = 3;

/** A specification's compile job is keyed by it, so adding it again replaces a waiting one. */
export const compileJobKey = (specificationId: string) => `specification:${specificationId}`;

/**
 * Compiles a specification from the input its request stored, in one transaction that holds the
 * specification: a second run of the job finds it compiled and does nothing, and a project deleted
 * meanwhile took the specification with it (nothing to do either). The last failed attempt marks it
 * failed, so it never stays "compiling".
 */
export const compileSpecificationJob = defineJob({
  name: 'specifications.compile',
  payload: z.object({ specificationId: z.uuid(), tenantId: z.uuid() }),
  async run({ specificationId, tenantId }, deps: JobDeps, helpers) {
    const { ownerDb, log } = deps;
    try {
      await ownerDb.transaction().execute(async (trx) => {
        const claimed = await claimCompilingSpecification(trx, tenantId, specificationId);
        if (!claimed) {
          log.info('specification already compiled, or deleted with its project; nothing to do');
          return;
        }
        const outcome = compileSpecification(claimed.input as unknown as CompileInput, claimed.options as unknown as CompileOptions, claimed.version);
        await completeSpecification(trx, specificationId, outcome);
      });
    } catch (error) {
      if (helpers.job.attempts >= helpers.job.max_attempts) {
        await failSpecification(ownerDb, specificationId, 'The compile failed unexpectedly; compile the project again (the worker log has the reason under this specificationId)');
      }
      throw error;
    }
  },
});
