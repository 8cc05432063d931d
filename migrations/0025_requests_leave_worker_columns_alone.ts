import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * Migration 0007 took heartbeats out of the app role's reach: a forged stale heartbeat naming a
 * live worker's pool would have had the reaper release that worker's jobs. An execution row names
 * the same things (its status, worker_process_id, locked_by), and the app role could write every
 * column of its tenant's executions and read every live pool's id from worker_heartbeats: an
 * execution marked running by a worker with no heartbeat, locked by a live worker's pool, had the
 * reaper force-unlock every job that worker held, other tenants' included, each then run twice.
 *
 * Requests write an execution's request columns when they start one, and the id of its job after
 * enqueuing it; everything else about a run is the worker's. Health reads when workers last beat.
 */
const REQUEST_COLUMNS = sql.raw('tenant_id, organization_id, project_id, kit_row_id, kit_version_id, input, options, created_by');

export async function up(db: Kysely<any>): Promise<void> {
  await sql`revoke insert, update on kit_executions from specwright_app`.execute(db);
  await sql`grant insert (${REQUEST_COLUMNS}) on kit_executions to specwright_app`.execute(db);
  await sql`grant update (worker_run_id) on kit_executions to specwright_app`.execute(db);
  await sql`revoke select on worker_heartbeats from specwright_app`.execute(db);
  await sql`grant select (last_seen_at) on worker_heartbeats to specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`revoke select (last_seen_at) on worker_heartbeats from specwright_app`.execute(db);
  await sql`grant select on worker_heartbeats to specwright_app`.execute(db);
  await sql`revoke insert (${REQUEST_COLUMNS}), update (worker_run_id) on kit_executions from specwright_app`.execute(db);
  await sql`grant insert, update on kit_executions to specwright_app`.execute(db);
}
