import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * An execution runs on its organization's credentials, and APPLY may push or deploy with them. It
 * was authorized when a request started it; a worker may run it much later (a queue, a retry). Who
 * started it is `created_by`; the API key they started it with is kept here, so that revoking the
 * key (a leaked one, say) also stops the runs it left queued and the credentials its running one
 * has yet to open, as removing the member does. Null: started with a session token.
 *
 * No foreign key: a key that no longer exists stops the run as a revoked one does. Requests write
 * it when they start an execution (migration 0025 gave them their request columns only).
 */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table kit_executions add column started_with_api_key_id uuid`.execute(db);
  await sql`grant insert (started_with_api_key_id) on kit_executions to specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`revoke insert (started_with_api_key_id) on kit_executions from specwright_app`.execute(db);
  await sql`alter table kit_executions drop column started_with_api_key_id`.execute(db);
}
