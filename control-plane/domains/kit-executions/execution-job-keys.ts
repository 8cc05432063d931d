/**
 * The graphile-worker job keys of an execution's jobs: one run job and one bundle job per
 * execution, so adding either again replaces the waiting one instead of queueing a second, and the
 * reaper finds an execution's job by its key.
 */
export const EXECUTION_JOB_KEY_PREFIX = 'kit-execution:';
export const BUNDLE_JOB_KEY_PREFIX = 'kit-bundle:';

export const executionJobKey = (executionId: string) => `${EXECUTION_JOB_KEY_PREFIX}${executionId}`;
export const bundleJobKey = (executionId: string) => `${BUNDLE_JOB_KEY_PREFIX}${executionId}`;
