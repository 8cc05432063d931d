import { sql, type Kysely, type RawBuilder } from 'kysely';
import { databaseNowExact } from '../../db/database-clock.ts';
import type { Database, KitExecutionLogEntry, KitExecutionPhase, KitExecutionStatus, OutputStatus } from '../../db/database.ts';
import { heartbeatIsFresh } from '../../jobs/worker-heartbeat.repository.ts';
import { componentVersionQuery } from '../kits/kits.repository.ts';
import { EXECUTION_JOB_KEY_PREFIX } from './execution-job-keys.ts';

/**
 * Takes a pending execution for this run of its job, and records the job as the one running it:
 * that job may retake it after a failed attempt; any other (a duplicate add, or the job enqueued
 * with the row when a duplicate claimed it first) finds nothing to do.
 */
export async function claimExecution(db: Kysely<Database>, claim: { executionId: string; tenantId: string; jobId: string; workerProcessId: string; lockedBy: string | null }) {
  return db
    .updateTable('kit_executions')
    .set({
      status: 'running',
      started_at: sql`coalesce(started_at, ${databaseNowExact})`,
      worker_run_id: claim.jobId,
      worker_process_id: claim.workerProcessId,
      locked_by: claim.lockedBy,
    })
    .where('id', '=', claim.executionId)
    .where('tenant_id', '=', claim.tenantId)
    .where((eb) => eb.or([eb('status', '=', 'pending'), eb.and([eb('status', '=', 'running'), eb('worker_run_id', '=', claim.jobId)])]))
    .returning(['id', 'tenant_id', 'organization_id', 'project_id', 'kit_version_id', 'input', 'options', 'created_by', 'started_with_api_key_id', 'created_at'])
    .executeTakeFirst();
}

export async function findKitVersionForRun(db: Kysely<Database>, versionId: string) {
  return db.selectFrom('kit_versions').select(['id', 'manifest', 'files', 'version']).where('id', '=', versionId).executeTakeFirstOrThrow();
}

/** The version of a composite's component a run uses (see componentVersionQuery), with its package. */
export async function findComponentVersion(db: Kysely<Database>, owner: { tenantId: string; organizationId: string }, component: { kitId: string; version?: string | undefined }) {
  return componentVersionQuery(db, owner, component).select(['v.id', 'v.manifest', 'v.files', 'v.version']).executeTakeFirst();
}

export interface OutputToStore {
  outputId: string;
  filename: string;
  outputType: string;
  contentType: string;
  content: string;
  status: OutputStatus;
  validationErrors: string[];
  validationWarnings: string[];
  contentSizeBytes: number;
}

/**
 * Kit-made text as PostgreSQL can store it: text and jsonb hold no NUL, and jsonb refuses an
 * unpaired surrogate. A kit can produce either (an output, a JSON key quoted in a schema error, a
 * key quoted in a hook-result error); each becomes U+FFFD, so the run is still recorded — an
 * output with a NUL is invalid anyway ("output contains NUL characters").
 */
function storable(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').toWellFormed();
}

/** Replaces whatever an earlier attempt stored: an execution never holds two copies of an output. */
export async function replaceOutputs(db: Kysely<Database>, tenantId: string, executionId: string, outputs: OutputToStore[]) {
  await db.deleteFrom('kit_outputs').where('tenant_id', '=', tenantId).where('execution_id', '=', executionId).execute();
  if (outputs.length === 0) return;
  await db
    .insertInto('kit_outputs')
    .values(
      outputs.map((output) => {
        const content = storable(output.content);
        return {
          tenant_id: tenantId,
          execution_id: executionId,
          output_id: output.outputId,
          filename: storable(output.filename),
          output_type: output.outputType,
          content_type: output.contentType,
          content,
          status: output.status,
          validation_errors: JSON.stringify(output.validationErrors.map(storable)),
          validation_warnings: JSON.stringify(output.validationWarnings.map(storable)),
          // The size of what is stored, which differs from the kit's only where a NUL was replaced.
          content_size_bytes: content === output.content ? output.contentSizeBytes : Buffer.byteLength(content, 'utf8'),
        };
      }),
    )
    .execute();
}

export interface ExecutionOutcome {
  status: Exclude<KitExecutionStatus, 'pending' | 'running'>;
  errorMessage: string | null;
  executionTimeMs: number;
  phases: KitExecutionPhase[];
  /** What the hooks logged, already redacted by the runtime. */
  logs: KitExecutionLogEntry[];
  /** What APPLY returned (redacted by the runtime); undefined when APPLY did not run. */
  applyResult: unknown;
  verifyWarnings: string[];
  counts: { valid: number; warnings: number; failed: number };
}

/** The most JSON of an APPLY result an execution keeps; a larger one is left out, and a log line says so. */
const MAX_STORED_APPLY_RESULT_BYTES = 64 * 1024;

/** Text PostgreSQL can store, in every string of a JSON value (keys included). */
function storableJson(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, _key, item: unknown) {
    if (typeof item === 'string') return storable(item);
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
      return Object.fromEntries(Object.entries(item).map(([key, entry]) => [storable(key), entry]));
    }
    return item;
  });
}

/** Log lines kept per execution: the first ones, then one line saying how many more there were. */
const MAX_STORED_LOG_ENTRIES = 200;

function storableLogs(logs: KitExecutionLogEntry[]): KitExecutionLogEntry[] {
  const kept = logs.slice(0, MAX_STORED_LOG_ENTRIES).map((entry) => ({ ...entry, message: storable(entry.message) }));
  const dropped = logs.length - kept.length;
  if (dropped > 0) kept.push({ phase: logs.at(-1)!.phase, level: 'warn', message: `${dropped} more log lines were not kept` });
  return kept;
}

export async function bundleableOutputs(db: Kysely<Database>, tenantId: string, executionId: string) {
  const rows = await db
    .selectFrom('kit_outputs')
    .select(['output_id', 'filename', 'content', 'status'])
    .where('tenant_id', '=', tenantId)
    .where('execution_id', '=', executionId)
    .where('status', '!=', 'invalid')
    .orderBy('output_id')
    .execute();
  return rows.map((row) => ({ outputId: row.output_id, filename: row.filename, content: row.content, status: row.status }));
}

export async function executionExists(db: Kysely<Database>, tenantId: string, executionId: string): Promise<boolean> {
  return (await db.selectFrom('kit_executions').select('id').where('tenant_id', '=', tenantId).where('id', '=', executionId).executeTakeFirst()) !== undefined;
}

/** When the execution ended: the bundle manifest's `createdAt`, fixed so a rebuilt bundle is the same bytes. */
export async function executionCompletedAt(db: Kysely<Database>, tenantId: string, executionId: string): Promise<Date | undefined> {
  const row = await db.selectFrom('kit_executions').select('completed_at').where('tenant_id', '=', tenantId).where('id', '=', executionId).executeTakeFirst();
  return row?.completed_at ?? undefined;
}

/** Attaches a built bundle unless one is attached already (a re-run job attaches nothing). */
export async function attachBundle(db: Kysely<Database>, executionId: string, bundle: { blobId: string; path: string; sizeBytes: number }): Promise<boolean> {
  const result = await db
    .updateTable('kit_executions')
    .set({ bundle_blob_id: bundle.blobId, bundle_path: bundle.path, bundle_size_bytes: bundle.sizeBytes })
    .where('id', '=', executionId)
    .where('bundle_blob_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records the end of a run — only if this worker still holds it (the reaper may have given up on it). */
export async function finishExecution(db: Kysely<Database>, executionId: string, workerProcessId: string, outcome: ExecutionOutcome): Promise<boolean> {
  const returned = outcome.applyResult === undefined ? null : storableJson(outcome.applyResult);
  const bytes = returned === null ? 0 : Buffer.byteLength(returned);
  const kept = bytes <= MAX_STORED_APPLY_RESULT_BYTES;
  const applyResultNotKept: KitExecutionLogEntry[] = kept ? [] : [{ phase: 'APPLY', level: 'warn', message: `what APPLY returned was not kept: ${bytes} bytes of JSON, over the ${MAX_STORED_APPLY_RESULT_BYTES} kept` }];
  const result = await db
    .updateTable('kit_executions')
    .set({
      status: outcome.status,
      error_message: outcome.errorMessage === null ? null : storable(outcome.errorMessage),
      // now(), not clock_timestamp(): the run is over before this short transaction opens.
      completed_at: databaseNowExact,
      execution_time_ms: outcome.executionTimeMs,
      phases: JSON.stringify(outcome.phases.map((phase) => (phase.detail === undefined ? phase : { ...phase, detail: storable(phase.detail) }))),
      logs: JSON.stringify([...storableLogs(outcome.logs), ...applyResultNotKept]),
      apply_result: kept ? returned : null,
      verify_warnings: JSON.stringify(outcome.verifyWarnings.map(storable)),
      outputs_valid: outcome.counts.valid,
      outputs_warnings: outcome.counts.warnings,
      outputs_failed: outcome.counts.failed,
    })
    .where('id', '=', executionId)
    .where('status', '=', 'running')
    .where('worker_process_id', '=', workerProcessId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Whether this worker's own heartbeat is younger than `withinMs`: whether it has reached the database lately. */
export async function ownHeartbeatIsFresh(db: Kysely<Database>, workerId: string, withinMs: number): Promise<boolean> {
  const row = await db
    .selectFrom('worker_heartbeats')
    .select(heartbeatIsFresh('last_seen_at', withinMs).as('fresh'))
    .where('worker_id', '=', workerId)
    .executeTakeFirst();
  return row?.fresh === true;
}

/**
 * The graphile-worker job that runs an execution (`e`): `worker_run_id` holds its id as text. The
 * `case` keeps the cast from text that is no id, whatever order PostgreSQL evaluates conditions in.
 */
const executionJobId = sql<string | null>`(case when e.worker_run_id ~ '^[0-9]{1,18}$' then e.worker_run_id::bigint end)`;

/**
 * Executions whose worker stopped beating (killed, crashed, lost): they end as failed, with a
 * message that says so, instead of staying "running" for ever. Not one whose job has another
 * attempt coming (its outcome could not be recorded): waiting, unlocked, for it, or already taken
 * by a worker other than the one that ran the last attempt and not yet claimed by it. That
 * attempt runs it again, whether or not the worker of the last one is still there.
 */
export async function failExecutionsOfDeadWorkers(db: Kysely<Database>, staleAfterMs: number) {
  return db
    .updateTable('kit_executions as e')
    .set({
      status: 'failed',
      // The reaper's transaction start: the moment by which it judged the heartbeat stale.
      completed_at: databaseNowExact,
      error_message: 'The worker running this execution stopped unexpectedly; no outputs were kept. Start a new execution.',
    })
    .where('e.status', '=', 'running')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('worker_heartbeats as h')
            .select('h.worker_id')
            .whereRef('h.worker_id', '=', 'e.worker_process_id')
            .where(heartbeatIsFresh('h.last_seen_at', staleAfterMs)),
        ),
      ),
    )
    .where(
      sql<boolean>`not exists (
        select 1 from graphile_worker.jobs as j
        where j.id = ${executionJobId}
          and ((j.locked_at is null and j.attempts < j.max_attempts) or (j.locked_at is not null and j.locked_by is distinct from e.locked_by))
      )`,
    )
    .returning(['e.id', 'e.locked_by', 'e.tenant_id'])
    .execute();
}

/**
 * Executions left "running" with nothing to finish them: their job used its last attempt (it could
 * record neither the outcome nor, the database still failing it, the failure) or is gone. A live
 * worker's heartbeat does not help them; they end as the last attempt would have ended them.
 */
export function failExecutionsNoJobWillFinish(db: Kysely<Database>) {
  return failExecutionsNoJobWillRun(db, 'running', 'This execution could not be recorded: recording it failed on each of its attempts.');
}

/**
 * Executions left "pending" with nothing to start them: the job enqueued with them used its last
 * attempt before it could claim them (the database refused every claim) or was removed, and no
 * other job under their key is waiting either. They end failed, as never started, instead of
 * reading "pending" for ever. A job locked by a dead worker is released by the same reaper pass
 * and judged at the next.
 */
export function failExecutionsNoJobWillStart(db: Kysely<Database>) {
  return failExecutionsNoJobWillRun(db, 'pending', 'This execution could not be started: its job ended without running it.', noJobWillRun(sql`j.key = ${EXECUTION_JOB_KEY_PREFIX}::text || e.id::text`));
}

/** Ends `status` executions whose job (by id, and `alsoNoJob`) will not run again as failed, saying `why`. */
function failExecutionsNoJobWillRun(db: Kysely<Database>, status: 'pending' | 'running', why: string, alsoNoJob: RawBuilder<boolean> = sql<boolean>`true`) {
  return db
    .updateTable('kit_executions as e')
    .set({ status: 'failed', completed_at: databaseNowExact, error_message: `${why} No outputs were kept; start a new execution.` })
    .where('e.status', '=', status)
    .where(sql<boolean>`${executionJobId} is not null`)
    // Separate look-ups rather than one with `or`, so each finds its job by an index (id, key).
    .where(noJobWillRun(sql`j.id = ${executionJobId}`))
    .where(alsoNoJob)
    .returning(['e.id'])
    .execute();
}

/** No job of `graphile_worker.jobs as j` matching `match` is running or has an attempt left. */
function noJobWillRun(match: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`not exists (select 1 from graphile_worker.jobs as j where ${match} and (j.locked_at is not null or j.attempts < j.max_attempts))`;
}
