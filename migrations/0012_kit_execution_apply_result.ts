import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // What a run's APPLY hook returned (redacted by the runtime; null when APPLY did not run or its
  // answer was too large to keep) and the warnings its VERIFY hook gave.
  await db.schema
    .alterTable('kit_executions')
    .addColumn('apply_result', 'jsonb')
    .addColumn('verify_warnings', 'jsonb', (column) => column.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('kit_executions').dropColumn('apply_result').dropColumn('verify_warnings').execute();
}
