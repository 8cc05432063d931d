import { sql, type Kysely } from 'kysely';
import type { Database, KitExecutionStatus } from '../../db/database.ts';
import { pagedRows } from '../../db/paged-rows.ts';
import type { Paging } from '../../http/paging.ts';

const executionColumns = [
  'e.id', 'e.tenant_id', 'e.organization_id', 'e.project_id', 'e.status', 'e.options', 'e.phases', 'e.error_message',
  'e.started_at', 'e.completed_at', 'e.execution_time_ms', 'e.outputs_valid', 'e.outputs_warnings', 'e.outputs_failed',
  'e.token_usage', 'e.estimated_cost_usd', 'e.bundle_blob_id', 'e.bundle_path', 'e.bundle_size_bytes', 'e.bundle_error', 'e.worker_run_id',
  'e.created_at', 'k.kit_id', 'v.version',
] as const;

function executions(db: Kysely<Database>, tenantId: string, organizationId: string) {
  return db
    .selectFrom('kit_executions as e')
    .innerJoin('kits as k', 'k.id', 'e.kit_row_id')
    .innerJoin('kit_versions as v', 'v.id', 'e.kit_version_id')
    .where('e.tenant_id', '=', tenantId)
    .where('e.organization_id', '=', organizationId);
}

export async function listExecutions(
  db: Kysely<Database>,
  tenantId: string,
  organizationId: string,
  filter: Paging & { projectId?: string | undefined; kitId?: string | undefined; status?: KitExecutionStatus | undefined },
) {
  let query = executions(db, tenantId, organizationId);
  if (filter.projectId) query = query.where('e.project_id', '=', filter.projectId);
  if (filter.kitId) query = query.where('k.kit_id', '=', filter.kitId);
  if (filter.status) query = query.where('e.status', '=', filter.status);
  return pagedRows(query.select(executionColumns).orderBy('e.created_at').orderBy('e.id'), query, filter);
}

export async function findExecution(db: Kysely<Database>, tenantId: string, organizationId: string, executionId: string) {
  return executions(db, tenantId, organizationId).select([...executionColumns, 'e.logs', 'e.apply_result', 'e.verify_warnings']).where('e.id', '=', executionId).executeTakeFirst();
}

/** A listed execution; the detail (`findExecution`) adds its logs, what APPLY returned and VERIFY's warnings. */
export type ExecutionRow = Awaited<ReturnType<typeof listExecutions>>['rows'][number];

export async function listOutputSummaries(db: Kysely<Database>, tenantId: string, executionId: string) {
  return db
    .selectFrom('kit_outputs')
    .select(['id', 'output_id', 'filename', 'status', 'content_size_bytes', 'validation_errors', 'validation_warnings'])
    .where('tenant_id', '=', tenantId)
    .where('execution_id', '=', executionId)
    .orderBy('output_id')
    .execute();
}

/**
 * An output by its row id or by the id its manifest gives it. A uuid may be either (a manifest id
 * may look like one); the row id wins.
 */
export async function findOutput(db: Kysely<Database>, tenantId: string, executionId: string, outputRef: string, refIsUuid: boolean) {
  const outputs = db.selectFrom('kit_outputs').selectAll().where('tenant_id', '=', tenantId).where('execution_id', '=', executionId);
  if (!refIsUuid) return outputs.where('output_id', '=', outputRef).executeTakeFirst();
  return outputs
    .where((eb) => eb.or([eb('id', '=', outputRef), eb('output_id', '=', outputRef)]))
    .orderBy(sql`id = ${outputRef}::uuid`, 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** How many of the tenant's executions are waiting to start, `except` one of them. */
export async function countWaitingExecutions(db: Kysely<Database>, tenantId: string, except: string): Promise<number> {
  const { count } = await db
    .selectFrom('kit_executions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'pending')
    .where('id', '!=', except)
    .executeTakeFirstOrThrow();
  return Number(count);
}

export async function insertExecution(
  db: Kysely<Database>,
  values: { tenantId: string; organizationId: string; projectId: string; kitRowId: string; kitVersionId: string; input: Record<string, unknown>; options: Record<string, boolean>; createdBy: string; startedWithApiKeyId: string | null },
) {
  return db
    .insertInto('kit_executions')
    .values({
      tenant_id: values.tenantId,
      organization_id: values.organizationId,
      project_id: values.projectId,
      kit_row_id: values.kitRowId,
      kit_version_id: values.kitVersionId,
      input: JSON.stringify(values.input),
      options: JSON.stringify(values.options),
      created_by: values.createdBy,
      started_with_api_key_id: values.startedWithApiKeyId,
    })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
}

export async function recordWorkerRun(db: Kysely<Database>, executionId: string, workerRunId: string) {
  await db.updateTable('kit_executions').set({ worker_run_id: workerRunId }).where('id', '=', executionId).execute();
}

export async function findVersionOfKit(db: Kysely<Database>, kitRowId: string, version: string) {
  return db.selectFrom('kit_versions').select(['id', 'version']).where('kit_row_id', '=', kitRowId).where('version', '=', version).executeTakeFirst();
}
