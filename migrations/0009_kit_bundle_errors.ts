import type { Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Why an execution's bundle could not be built, when no retry would help: the bundle is then
  // "failed" rather than "building" for ever. Null while it is building, once it is attached, or
  // when there is nothing to bundle.
  await db.schema.alterTable('kit_executions').addColumn('bundle_error', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('kit_executions').dropColumn('bundle_error').execute();
}
