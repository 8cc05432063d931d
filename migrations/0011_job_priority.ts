import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

const WITHOUT_PRIORITY = sql`app_private.enqueue_job(text, json, text, integer, timestamptz)`;
const WITH_PRIORITY = sql`app_private.enqueue_job(text, json, text, integer, timestamptz, integer)`;

/**
 * The app role's way to enqueue takes a priority too (graphile-worker runs the lowest first), so
 * one tenant's backlog of kit executions does not hold up another tenant's first one. The priority
 * is the tenant's count of executions waiting to start, read at every execute: a partial index
 * keeps that count to the waiting ones, however long the tenant's history.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Written to run again harmlessly (a database whose record of it was lost).
  await sql`drop function if exists ${WITHOUT_PRIORITY}`.execute(db);
  await sql`
    create or replace function app_private.enqueue_job(identifier text, payload json, job_key text default null,
                                            max_attempts integer default null, run_at timestamptz default null,
                                            priority integer default null)
      returns bigint
      language sql volatile security definer set search_path = pg_catalog, public
      as $$
        select (graphile_worker.add_job(identifier, payload, job_key => job_key,
                                        max_attempts => max_attempts, run_at => run_at, priority => priority)).id
      $$
  `.execute(db);
  await sql`revoke execute on function ${WITH_PRIORITY} from public`.execute(db);
  await sql`grant execute on function ${WITH_PRIORITY} to specwright_app`.execute(db);
  await sql`create index if not exists kit_executions_waiting_idx on kit_executions (tenant_id) where status = 'pending'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists kit_executions_waiting_idx`.execute(db);
  await sql`drop function ${WITH_PRIORITY}`.execute(db);
  await sql`
    create function app_private.enqueue_job(identifier text, payload json, job_key text default null,
                                            max_attempts integer default null, run_at timestamptz default null)
      returns bigint
      language sql volatile security definer set search_path = pg_catalog, public
      as $$
        select (graphile_worker.add_job(identifier, payload, job_key => job_key,
                                        max_attempts => max_attempts, run_at => run_at)).id
      $$
  `.execute(db);
  await sql`revoke execute on function ${WITHOUT_PRIORITY} from public`.execute(db);
  await sql`grant execute on function ${WITHOUT_PRIORITY} to specwright_app`.execute(db);
}
