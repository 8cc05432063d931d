import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { BUNDLE_JOB_KEY_PREFIX } from './execution-job-keys.ts';

/**
 * Marks the outputs a bundle could not hold invalid, each with the reason, and recounts the
 * execution's outputs, so the outputs, the bundle's contents and bundleStatus tell one story: an
 * output is in the bundle exactly when it is not invalid. Only stored rows older than the current
 * filename rules need this; rendering refuses such names now.
 */
export async function markLeftOutOfBundle(db: Kysely<Database>, tenantId: string, executionId: string, leftOut: ReadonlyArray<{ outputId: string; reason: string }>) {
  for (const { outputId, reason } of leftOut) {
    await db
      .updateTable('kit_outputs')
      .set({ status: 'invalid', validation_errors: sql`validation_errors || jsonb_build_array(${`left out of the bundle: ${reason}`}::text)` })
      .where('tenant_id', '=', tenantId)
      .where('execution_id', '=', executionId)
      .where('output_id', '=', outputId)
      .execute();
  }
  const countOf = (status: 'valid' | 'warning' | 'invalid') =>
    db
      .selectFrom('kit_outputs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('execution_id', '=', executionId)
      .where('status', '=', status);
  await db
    .updateTable('kit_executions')
    .set({ outputs_valid: countOf('valid'), outputs_warnings: countOf('warning'), outputs_failed: countOf('invalid') })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', executionId)
    .execute();
}

/** Records why the bundle cannot be built, unless one was attached meanwhile (bundleStatus "failed"). */
export async function recordBundleFailure(db: Kysely<Database>, tenantId: string, executionId: string, why: string) {
  await db
    .updateTable('kit_executions')
    .set({ bundle_error: why })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', executionId)
    .where('bundle_blob_id', 'is', null)
    .execute();
}

/**
 * Bundles no job will build: their job used its last attempt (or its worker died during it) without
 * recording why, the database still failing it. Each ends "failed", as that attempt would have ended
 * it, instead of reading "building" for good. Found from the failed jobs, which are few, by their key.
 */
export async function recordBundlesNoJobWillBuild(db: Kysely<Database>) {
  const { rows } = await sql<{ id: string }>`
    update kit_executions as e
    set bundle_error = 'building it failed on each of its attempts'
    from graphile_worker.jobs as j
    where j.task_identifier = 'kits.bundle_execution' and j.locked_at is null and j.attempts >= j.max_attempts
      and e.id = (case when j.key ~ ${`^${BUNDLE_JOB_KEY_PREFIX}[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`} then substr(j.key, ${BUNDLE_JOB_KEY_PREFIX.length + 1})::uuid end)
      and e.status not in ('pending', 'running') and e.bundle_blob_id is null and e.bundle_error is null
    returning e.id
  `.execute(db);
  return rows;
}
