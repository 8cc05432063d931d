import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * User stories (seed §2.1, DESIGN §5.2): what a project's users need, each with its priority, its
 * status and the acceptance criteria (strings) that show it met; they feed the compiled
 * specification's requirements. A client may choose a story's id (Variant A sends one), so the id
 * has a default but no sequence of its own: a duplicate is the primary key's to refuse.
 *
 * A story belongs to its project and tenant (row-level security; keys within the tenant) and goes
 * with the project. Requests insert and delete stories, and update only what a PUT or PATCH may
 * change (column grants): a story never moves to another project or tenant, and keeps who made it
 * and when.
 */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table user_stories (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants (id) on delete cascade,
      project_id uuid not null,
      title text not null,
      description text,
      priority text not null default 'medium' check (priority in ('low', 'medium', 'high', 'critical')),
      status text not null default 'draft' check (status in ('draft', 'ready', 'in_progress', 'done')),
      acceptance_criteria jsonb not null check (jsonb_typeof(acceptance_criteria) = 'array'),
      created_by uuid,
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      updated_at timestamptz not null default date_trunc('milliseconds', now()),
      constraint user_stories_tenant_id_key unique (tenant_id, id),
      constraint user_stories_project_fkey foreign key (tenant_id, project_id) references projects (tenant_id, id) on delete cascade,
      constraint user_stories_created_by_fkey foreign key (tenant_id, created_by) references users (tenant_id, id) on delete set null (created_by)
    )
  `.execute(db);
  await sql`create index user_stories_tenant_project_idx on user_stories (tenant_id, project_id, created_at, id)`.execute(db);
  await sql`create index user_stories_created_by_idx on user_stories (created_by, tenant_id)`.execute(db);

  await sql`alter table user_stories enable row level security`.execute(db);
  await sql`
    create policy tenant_isolation on user_stories
      using (tenant_id = app_current_tenant())
      with check (tenant_id = app_current_tenant())
  `.execute(db);
  // The default privileges of 0001 grant UPDATE on the whole table; taken back here.
  await sql`revoke update on user_stories from specwright_app`.execute(db);
  await sql`grant select, insert, delete on user_stories to specwright_app`.execute(db);
  await sql`grant update (title, description, priority, status, acceptance_criteria, updated_at) on user_stories to specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table user_stories`.execute(db);
}
