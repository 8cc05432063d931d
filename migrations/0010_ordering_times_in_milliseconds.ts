import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * Every column a list is ordered by (then by id), and the update times shown beside them (so a row
 * never updated shows updatedAt = createdAt), as of this migration.
 */
const orderingColumns: Array<[table: string, column: string]> = [
  ['kits', 'updated_at'],
  ['organizations', 'updated_at'],
  ['projects', 'updated_at'],
  ['agency_project_assignments', 'created_at'],
  ['api_keys', 'created_at'],
  ['blobs', 'created_at'],
  ['credential_keys', 'created_at'],
  ['customer_invitations', 'created_at'],
  ['kit_credentials', 'created_at'],
  ['kit_executions', 'created_at'],
  ['kit_outputs', 'created_at'],
  ['kit_versions', 'created_at'],
  ['kits', 'created_at'],
  ['organizations', 'created_at'],
  ['organization_members', 'joined_at'],
  ['projects', 'created_at'],
  ['tenants', 'created_at'],
  ['users', 'created_at'],
];

export async function up(db: Kysely<any>): Promise<void> {
  // Answers show these times to the millisecond and lists order by them, then by id. PostgreSQL
  // kept microseconds, so rows made in the same millisecond were ordered by digits no answer shows,
  // and the id never broke the tie a client sees. The columns now hold what answers show.
  // Kit versions refuse updates (a trigger); truncating a time changes nothing an answer shows.
  await sql`alter table kit_versions disable trigger kit_versions_immutable`.execute(db);
  for (const [table, column] of orderingColumns) {
    const ref = sql.ref(column);
    await sql`alter table ${sql.table(table)} alter column ${ref} set default date_trunc('milliseconds', now())`.execute(db);
    await sql`update ${sql.table(table)} set ${ref} = date_trunc('milliseconds', ${ref}) where ${ref} <> date_trunc('milliseconds', ${ref})`.execute(db);
  }
  await sql`alter table kit_versions enable trigger kit_versions_immutable`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [table, column] of orderingColumns) {
    await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set default now()`.execute(db);
  }
}
