import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // What a run's hooks logged (kit.log, console.*), redacted by the runtime and bounded by the
  // worker: [{phase, level, message}], oldest first.
  await db.schema
    .alterTable('kit_executions')
    .addColumn('logs', 'jsonb', (column) => column.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('kit_executions').dropColumn('logs').execute();
}
