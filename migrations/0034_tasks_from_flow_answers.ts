import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * Tasks the flow makes from answers (an integration to connect, a regulation to review): `origin`
 * names what in the answers a task stands for (`integration:stripe`, `compliance:gdpr`), at most
 * one task per origin in a project, so answering again never makes a second one. Tasks made
 * through POST /tasks have none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table tasks add column origin text check (origin ~ '^[a-z]+:.{1,200}$')`.execute(db);
  await sql`create unique index tasks_origin_key on tasks (tenant_id, project_id, origin) where origin is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index tasks_origin_key`.execute(db);
  await sql`alter table tasks drop column origin`.execute(db);
}
