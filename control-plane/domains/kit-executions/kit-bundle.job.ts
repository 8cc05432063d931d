import { z } from 'zod';
import type { Job } from 'graphile-worker';
import { BundleError, buildOutputBundle } from '../../../kit-runtime/index.ts';
import { permanentRefusalOf } from '../../db/postgres-errors.ts';
import { defineJob, type JobDeps } from '../../jobs/job-definition.ts';
import { putBlob } from '../blobs/blobs.repository.ts';
import { markLeftOutOfBundle, recordBundleFailure } from './kit-bundle.repository.ts';
import { attachBundle, bundleableOutputs, executionCompletedAt } from './kit-execution-worker.repository.ts';

/**
 * Whether an ended execution gets a bundle: when it kept at least one valid or warning output,
 * whatever its status — a run that fails at APPLY or VERIFY has still rendered and validated its
 * files. The job is enqueued by this rule and bundleStatus reads "building" by it, so the two agree
 * from the transaction that ends the execution.
 */
export function getsBundle(counts: { valid: number; warnings: number }): boolean {
  return counts.valid + counts.warnings > 0;
}

/**
 * Builds an execution's bundle after the execution has finished: a ZIP of its valid and warning
 * outputs plus a checksum manifest, stored as a blob. Enqueued in the transaction that finishes
 * the execution; idempotent (a bundle, once attached, is never rebuilt).
 *
 * A stored name the bundle cannot hold (rows from before the current filename rules) would fail
 * every retry alike, leaving bundleStatus "building" for good; instead that output is marked
 * invalid with the reason and left out, so the bundle ends "ready" — or "none" when nothing is left.
 * Any other failure no retry can cure (a refusal the database repeats, the last attempt) ends it
 * "failed", with the reason GET …/bundle gives.
 */
export const bundleExecutionJob = defineJob({
  name: 'kits.bundle_execution',
  payload: z.object({ executionId: z.uuid(), tenantId: z.uuid(), kitRef: z.string() }),
  async run(payload, deps, helpers) {
    try {
      await buildAndAttachBundle(payload, deps);
    } catch (error) {
      // A bundle that cannot be built would otherwise read "building" through every retry.
      const why = whyBundleCannotBeBuilt(error, helpers.job);
      if (why === null) throw error;
      deps.log.error({ err: error }, 'execution bundle could not be built; marking it failed');
      await recordBundleFailure(deps.ownerDb, payload.tenantId, payload.executionId, why);
    }
  },
});

/** Why retrying cannot help this bundle, or null when it may (and attempts are left). */
function whyBundleCannotBeBuilt(error: unknown, job: Pick<Job, 'attempts' | 'max_attempts'>): string | null {
  const permanent = permanentRefusalOf(error);
  if (permanent) return `the database refused it: ${permanent.description}`;
  if (error instanceof BundleError) return error.message;
  if (job.attempts >= job.max_attempts) return `building it failed on each of ${job.attempts} attempts`;
  return null;
}

async function buildAndAttachBundle({ executionId, tenantId, kitRef }: { executionId: string; tenantId: string; kitRef: string }, { ownerDb, log }: JobDeps) {
  const outputs = await bundleableOutputs(ownerDb, tenantId, executionId);
  if (outputs.length === 0) return;
  const createdAt = await executionCompletedAt(ownerDb, tenantId, executionId);
  const bundle = await buildOutputBundle(outputs, { kitRef, executionId, leaveOutUnbundleable: true, ...(createdAt ? { createdAt } : {}) });
  const leftOut = bundle.leftOut.map(({ outputId, reason }) => ({ outputId: outputId as string, reason }));
  await ownerDb.transaction().execute(async (trx) => {
    if (leftOut.length > 0) await markLeftOutOfBundle(trx, tenantId, executionId, leftOut);
    if (bundle.entries.length === 0) return;
    const blob = await putBlob(trx, { tenantId, contentType: 'application/zip', content: bundle.buffer, sha256: bundle.sha256 });
    const attached = await attachBundle(trx, executionId, { blobId: blob.id, path: `executions/${executionId}/bundle.zip`, sizeBytes: bundle.sizeBytes });
    if (!attached) throw new BundleAlreadyAttached();
  }).catch((error) => {
    if (!(error instanceof BundleAlreadyAttached)) throw error;
  });
  if (leftOut.length > 0) log.warn({ leftOut }, 'outputs left out of the execution bundle');
  log.info({ sizeBytes: bundle.sizeBytes, entries: bundle.entries.length }, 'execution bundle built');
}

class BundleAlreadyAttached extends Error {}
