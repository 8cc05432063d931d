import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * Least privilege, continued (0006, 0007, 0016). No request deletes a kit or a kit version: versions
 * are immutable and a kit is deprecated, never removed (deleting one would cascade through every
 * execution of it). And a request changes an API key only to revoke it (its last use is recorded by
 * app_private.authenticate_api_key, as the owner): the app role could otherwise move a key to another
 * user of the tenant, or rename or re-hash it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`revoke delete on kits, kit_versions from specwright_app`.execute(db);
  await sql`revoke update on api_keys from specwright_app`.execute(db);
  await sql`grant update (revoked_at) on api_keys to specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`revoke update (revoked_at) on api_keys from specwright_app`.execute(db);
  await sql`grant update on api_keys to specwright_app`.execute(db);
  await sql`grant delete on kits, kit_versions to specwright_app`.execute(db);
}
