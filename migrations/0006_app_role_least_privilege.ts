import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Requests only read heartbeats (health). Writing them is the workers' (owner's) business: a forged
  // stale heartbeat naming a live worker's pool would have the reaper release that worker's jobs.
  await sql`revoke insert, update, delete on worker_heartbeats from specwright_app`.execute(db);
  // No request deletes a tenant or a user, and either delete cascades through the tenant's rows.
  await sql`revoke delete on tenants, users from specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`grant delete on tenants, users to specwright_app`.execute(db);
  await sql`grant insert, update, delete on worker_heartbeats to specwright_app`.execute(db);
}
