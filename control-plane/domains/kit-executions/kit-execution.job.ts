import type { Job } from 'graphile-worker';
import { z } from 'zod';
import { createGitCapabilities, HostCapabilityError, loadKitPackage, RUN_CANCELLED_MESSAGE, type HostCapability, type KitExecutionResult, type KitPackage } from '../../../kit-runtime/index.ts';
import { permanentRefusalOf } from '../../db/postgres-errors.ts';
import { addJob } from '../../jobs/add-job.ts';
import { defineJob, type JobDeps } from '../../jobs/job-definition.ts';
import { CredentialUnopenableError } from '../kit-credentials/credential-vault.ts';
import { kitsEnabledFor } from '../kits/kit-access.ts';
import { getsBundle } from './kit-bundle.job.ts';
import { claimExecution, executionExists, finishExecution, findComponentVersion, findKitVersionForRun, replaceOutputs, type ExecutionOutcome } from './kit-execution-worker.repository.ts';
import { bundleJobKey } from './execution-job-keys.ts';
import { withdrawnAuthority, type StarterWithdrawn } from './execution-starter-authority.ts';
import { cutByShutdownMessage, kitsDisabledMessage, withdrawnBeforeRunning, withdrawnWhileRunning } from './execution-stop-messages.ts';

/** Kits that publish to a platform may push to git; a kit that only makes files has no need to reach the network. */
const KIT_TYPES_LENT_GIT: ReadonlySet<string> = new Set(['platform', 'hybrid']);
/** What other kits find under those names: a refusal that says why, rather than "not a function". */
const refuseGit = (name: string): HostCapability => ({
  call: () => {
    throw new HostCapabilityError(`kit.${name} is lent only to kits of kitType platform or hybrid`);
  },
});
const gitRefused = { gitCommit: refuseGit('gitCommit'), gitVerify: refuseGit('gitVerify') };

/** Loaded kit packages by version id: versions are immutable, so a cached one never goes stale. */
const packages = new Map<string, KitPackage>();
const MAX_CACHED_PACKAGES = 200;

function kitPackageFor(version: { id: string; manifest: unknown; files: Record<string, string> }): KitPackage {
  const cached = packages.get(version.id);
  if (cached) return cached;
  const loaded = loadKitPackage({ manifest: version.manifest, files: version.files, stored: true });
  // Published versions were checked at publish time; failing here means the runtime changed.
  if (!loaded.ok) throw new KitVersionUnloadable(`Kit version ${version.id} no longer loads: ${loaded.problems.map((p) => `${p.file}: ${p.message}`).join('; ')}`);
  if (packages.size >= MAX_CACHED_PACKAGES) packages.delete(packages.keys().next().value!);
  packages.set(version.id, loaded.kit);
  return loaded.kit;
}

function outcomeOf(result: KitExecutionResult): ExecutionOutcome {
  const count = (status: string) => result.outputs.filter((output) => output.status === status).length;
  return {
    status: result.status,
    errorMessage: result.status === 'completed' ? null : result.message,
    executionTimeMs: Math.round(result.executionTimeMs),
    phases: result.phases.map((phase) => ({ ...phase, durationMs: Math.round(phase.durationMs) })),
    logs: result.logs,
    applyResult: result.applyResult,
    verifyWarnings: result.verifyWarnings,
    counts: { valid: count('valid'), warnings: count('warning'), failed: count('invalid') },
  };
}

/**
 * Attempts an execution's job, and its bundle's, get. A kit's own failure ends the run at once;
 * these are for the service's trouble (the database away while recording). graphile-worker waits
 * e^n seconds after the n-th failed attempt, so 8 attempts span about half an hour; its default of
 * 25 would leave the execution reading `running`, or its bundle `building`, for days.
 */
export const EXECUTION_JOB_ATTEMPTS = 8;

export const executeKitJob = defineJob({
  name: 'kits.execute',
  payload: z.object({ executionId: z.uuid(), tenantId: z.uuid() }),
  async run({ executionId, tenantId }, deps: JobDeps, helpers) {
    const { ownerDb, log } = deps;
    const claimed = await claimExecution(ownerDb, {
      executionId,
      tenantId,
      jobId: String(helpers.job.id),
      workerProcessId: deps.workerProcessId,
      lockedBy: helpers.job.locked_by,
    });
    if (!claimed) {
      log.info('execution already taken or finished; nothing to do');
      return;
    }
    const ran: { outcome?: ExecutionOutcome } = {};
    try {
      // Switching kits off stops the runs already queued or waiting for a retry, not only new ones.
      if (!(await kitsEnabledFor(ownerDb, tenantId))) {
        await failExecution(deps, { executionId, tenantId }, kitsDisabledMessage(helpers.job.attempts));
        log.info('kits are disabled for this tenant; the execution ends failed without running');
        return;
      }
      // And so does withdrawing the authority it was started on: the member removed, the key revoked.
      const withdrawn = await withdrawnAuthority(ownerDb, tenantId, claimed);
      if (withdrawn) {
        await failExecution(deps, { executionId, tenantId }, withdrawnBeforeRunning(withdrawn, helpers.job.attempts));
        log.info({ withdrawn }, 'whoever started the execution may no longer run it; it ends failed without running');
        return;
      }
      await runClaimedExecution(claimed, { executionId, tenantId }, deps, ran, helpers.abortSignal);
    } catch (error) {
      // Its project was deleted while it ran, taking the execution with it: nothing left to record.
      if (!(await executionExists(ownerDb, tenantId, executionId))) {
        log.info('execution deleted with its project while it ran; its outcome is dropped');
        return;
      }
      // A run whose outcome can never be stored would otherwise stay "running" through every retry.
      const why = whyNotToRetry(error, helpers.job);
      if (why === null) throw error;
      const failedNow = await failExecution(deps, { executionId, tenantId }, `This execution could not be recorded: ${why}. No outputs were kept; start a new execution.`, ran.outcome).catch((failure: unknown) => {
        log.error({ err: error }, 'kit execution could not be recorded, nor its failure');
        throw failure;
      });
      // An outcome whose COMMIT answer was lost is stored all the same: it stands, and is no error.
      if (failedNow) log.error({ err: error }, 'kit execution could not be recorded; failed it');
      else log.warn({ err: error }, 'kit execution outcome was stored although its answer was lost; it stands');
    }
  },
});

type ClaimedExecution = NonNullable<Awaited<ReturnType<typeof claimExecution>>>;

/**
 * Runs the kit and stores its outcome; `ran.outcome` is set once the kit has run. `signal` is the
 * job's, aborted when the worker shuts down: the run is cancelled then, its git pushes with it.
 */
async function runClaimedExecution(
  claimed: ClaimedExecution,
  { executionId, tenantId }: { executionId: string; tenantId: string },
  deps: JobDeps,
  ran: { outcome?: ExecutionOutcome },
  signal: AbortSignal,
) {
  const { ownerDb, log } = deps;
  const version = await findKitVersionForRun(ownerDb, claimed.kit_version_id);
  const kit = kitPackageFor(version);
  // Credentials of this project and kit only, and only those the kit declares: the git
  // capabilities open them host-side with whatever id the kit's hook names.
  const declared = new Set((kit.manifest.credentials ?? []).map((credential) => credential.id));
  // The kit sees "could not be opened" whatever went wrong; a failure of the database or the key
  // ring, not of the stored credential, is kept here, so the job tries again instead.
  let openingFault: unknown;
  // Opened only while whoever started the run may still run it: their authority withdrawn
  // meanwhile (removed, the key revoked), the run gets no further credential, and ends failed.
  let withdrawn: StarterWithdrawn | null = null;
  const withdrawnNow = async () => (withdrawn ??= await withdrawnAuthority(ownerDb, tenantId, claimed));
  const openCredential = async (credentialId: string) => {
    if (!declared.has(credentialId)) return null;
    // Inside the try: the database failing the authority check is the server's trouble too.
    try {
      if (await withdrawnNow()) return null;
      const secret = await deps.credentials.openForExecution({ tenantId, organizationId: claimed.organization_id, projectId: claimed.project_id, kitId: kit.manifest.metadata.id, credentialId });
      // Asked again once it is open: a removal that committed while it was being opened is seen
      // here, and the secret is not handed over after it.
      return secret !== null && (await withdrawnNow()) ? null : secret;
    } catch (error) {
      if (!(error instanceof CredentialUnopenableError)) openingFault ??= error;
      throw error;
    }
  };
  const result = await deps.kitRuntime.execute(kit, {
    tenantId,
    input: claimed.input,
    options: { dryRun: claimed.options.dryRun === true, skipApply: claimed.options.skipApply === true },
    openCredential,
    capabilities: { ...(KIT_TYPES_LENT_GIT.has(kit.manifest.metadata.kitType) ? createGitCapabilities({ openCredential, isAllowedRemote: deps.isAllowedGitRemote }) : gitRefused), ...deps.kitCapabilities },
    resolveKit: async (component) => {
      const found = await findComponentVersion(ownerDb, { tenantId, organizationId: claimed.organization_id }, component);
      return found ? kitPackageFor(found) : null;
    },
    signal,
  });
  if (openingFault !== undefined && result.status === 'failed') {
    log.warn({ err: openingFault }, 'a credential could not be opened for a reason of the server\'s own; the execution runs again');
    throw openingFault;
  }
  const outcome = outcomeOf(result);
  // Withdrawn while the run had no credential left to open, it is withdrawn all the same: the run
  // was theirs to the end, and its outcome is not kept.
  const withdrawnBy = await withdrawnNow();
  if (withdrawnBy) {
    ran.outcome = outcome;
    await failExecution(deps, { executionId, tenantId }, withdrawnWhileRunning(withdrawnBy), outcome);
    log.info({ withdrawn: withdrawnBy }, 'whoever started the execution lost the authority to run it while it ran; it ends failed');
    return;
  }
  // Cancelled by the job's signal: the worker shut down under it. Its user cancelled nothing.
  if (signal.aborted && result.error?.code === 'PHASE_FAILED' && result.error.message === RUN_CANCELLED_MESSAGE) {
    outcome.errorMessage = cutByShutdownMessage(result.error.phase);
  }
  ran.outcome = outcome;

  const finished = await ownerDb.transaction().execute(async (trx) => {
    await replaceOutputs(trx, tenantId, executionId, result.outputs);
    const stored = await finishExecution(trx, executionId, deps.workerProcessId, outcome);
    // The reaper gave up on this run meanwhile: keep its verdict, and none of these outputs.
    if (!stored) throw new ExecutionTakenAway();
    // The bundle is built by its own job, so zipping never holds up (or fails) the execution.
    if (getsBundle(outcome.counts)) {
      await addJob(trx, 'kits.bundle_execution', { executionId, tenantId, kitRef: result.kitRef }, { jobKey: bundleJobKey(executionId), maxAttempts: EXECUTION_JOB_ATTEMPTS });
    }
    return stored;
  }).catch((error) => {
    if (error instanceof ExecutionTakenAway) return false;
    throw error;
  });
  log.info({ status: result.status, stored: finished, ms: Math.round(result.executionTimeMs) }, 'kit execution finished');
}

/** Constraints whose violation says something plainer than its name. */
const CONSTRAINT_MEANINGS: Readonly<Record<string, string>> = {
  kit_outputs_execution_output_key: 'two outputs have the same id',
};

/** Why retrying this job cannot help, or null when it may (and attempts are left). */
export function whyNotToRetry(error: unknown, job: Pick<Job, 'attempts' | 'max_attempts'>): string | null {
  if (error instanceof KitVersionUnloadable) return 'its kit version no longer loads in this server';
  const permanent = permanentRefusalOf(error);
  if (permanent) {
    const meaning = permanent.constraint === undefined ? undefined : CONSTRAINT_MEANINGS[permanent.constraint];
    if (meaning !== undefined) return meaning;
    return `the database refused its outcome: ${permanent.description}`;
  }
  if (job.attempts >= job.max_attempts) return `recording it failed on each of ${job.attempts} attempts`;
  return null;
}

/**
 * Ends the execution failed with `errorMessage`, keeping none of its outputs (of `outcome`, the
 * run's, only its timings, phases and logs); a failure here leaves the job to retry. Only while this
 * worker still holds it running: an execution that has ended meanwhile keeps its outcome and its
 * outputs — one whose outcome was stored although the answer to its COMMIT was lost reads
 * `completed` with the outputs it counts, not with none of them. Says whether it ended it.
 */
async function failExecution(deps: JobDeps, { executionId, tenantId }: { executionId: string; tenantId: string }, errorMessage: string, outcome?: ExecutionOutcome): Promise<boolean> {
  return deps.ownerDb.transaction().execute(async (trx) => {
    const stored = await finishExecution(trx, executionId, deps.workerProcessId, {
      status: 'failed',
      errorMessage,
      executionTimeMs: outcome?.executionTimeMs ?? 0,
      phases: outcome?.phases ?? [],
      // Not what APPLY returned: it may be what could not be recorded.
      applyResult: undefined,
      verifyWarnings: outcome?.verifyWarnings ?? [],
      logs: outcome?.logs ?? [],
      counts: { valid: 0, warnings: 0, failed: 0 },
    });
    if (stored) await replaceOutputs(trx, tenantId, executionId, []);
    return stored;
  });
}

class KitVersionUnloadable extends Error {}
class ExecutionTakenAway extends Error {}
