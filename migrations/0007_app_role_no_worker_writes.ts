import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Outputs and bundle bytes are written by workers (as the owner); requests only read them, and
  // delete them with their project. A kit version, once published, is never updated.
  await sql`revoke insert, update on kit_outputs, blobs from specwright_app`.execute(db);
  await sql`revoke update on kit_versions from specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`grant update on kit_versions to specwright_app`.execute(db);
  await sql`grant insert, update on kit_outputs, blobs to specwright_app`.execute(db);
}
