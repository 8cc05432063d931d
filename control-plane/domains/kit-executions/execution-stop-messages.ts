import { KITS_FEATURE_FLAG } from '../kits/kit-access.ts';
import type { StarterWithdrawn } from './execution-starter-authority.ts';

// What an execution that a worker stopped says in its errorMessage: why, and what to do next.

const SAID: Record<StarterWithdrawn, { before: string; during: string; next: string }> = {
  memberLeft: {
    before: 'Whoever started this execution is no longer a member of its organization',
    during: 'Whoever started this execution stopped being a member of its organization while it ran',
    next: 'A member can start a new execution.',
  },
  keyRevoked: {
    before: 'The API key this execution was started with has been revoked',
    during: 'The API key this execution was started with was revoked while it ran',
    next: 'Start a new execution with a key in use.',
  },
};

/** Why a run ends before it runs. On a retry an earlier attempt may have run some of it (APPLY included). */
function stoppedBeforeRunning(why: string, attempt: number, next: string): string {
  const what = attempt > 1 ? 'was stopped before its retry: an earlier attempt may have run part of it, and none of its outputs were kept' : 'did not run';
  return `${why}, so this execution ${what}. ${next}`;
}

/** The error of a run whose starter's authority was withdrawn before a worker started it. */
export function withdrawnBeforeRunning(why: StarterWithdrawn, attempt: number): string {
  return stoppedBeforeRunning(SAID[why].before, attempt, SAID[why].next);
}

/** The error of a run whose starter's authority was withdrawn while it ran. */
export function withdrawnWhileRunning(why: StarterWithdrawn): string {
  return `${SAID[why].during}, so no credential was opened for it after that and none of its outputs were kept. ${SAID[why].next}`;
}

/** Why a run ends when kits are off. */
export function kitsDisabledMessage(attempt: number): string {
  return stoppedBeforeRunning(`Kits are disabled for this tenant (the feature flag ${KITS_FEATURE_FLAG} is off)`, attempt, 'Start a new execution once kits are enabled again.');
}

/** Why a run the worker's shutdown cut off failed. APPLY may have done part of its work (a push its server received). */
export function cutByShutdownMessage(phase: string | null): string {
  const where = phase === null ? '' : ` at ${phase}`;
  const partly = phase === 'APPLY' ? ' What APPLY had already sent (a git push its server received) may have been applied.' : '';
  return `The worker running this execution shut down, so the run was stopped${where}.${partly} Start a new execution.`;
}
