import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * Tasks (seed §4.6, DESIGN §5.6): work a project asks of a person or an agent — provide, decide,
 * review, connect — each with the actions that answer it. A task waits (`blocked`) while a task it
 * depends on is not completed; a dependency is a task of the same project made before it, so the
 * dependencies can never form a cycle. Submitting an action records a `task_submissions` row under
 * the request's idempotency key (unique within the tenant): the same key and body answer the
 * stored response again, and nothing is done twice.
 *
 * All belong to their project and tenant (row-level security; keys within the tenant) and go with
 * the project. Requests insert tasks, dependencies and submissions, and update only a task's
 * status and its time stamps (column grants); submissions are never changed.
 */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table tasks (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants (id) on delete cascade,
      project_id uuid not null,
      type text not null check (type in ('PROVIDE', 'DECIDE', 'REVIEW', 'CONNECT')),
      title text not null,
      description text not null,
      status text not null check (status in ('pending', 'in_progress', 'completed', 'cancelled', 'blocked')),
      priority text not null check (priority in ('low', 'medium', 'high', 'urgent')),
      assignee_type text check (assignee_type in ('user', 'agent')),
      assignee_id text,
      actions jsonb not null,
      targets jsonb not null,
      due_date timestamptz,
      created_by uuid,
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      updated_at timestamptz not null default date_trunc('milliseconds', now()),
      completed_at timestamptz,
      constraint tasks_tenant_id_key unique (tenant_id, id),
      constraint tasks_project_fkey foreign key (tenant_id, project_id) references projects (tenant_id, id) on delete cascade,
      constraint tasks_created_by_fkey foreign key (tenant_id, created_by) references users (tenant_id, id) on delete set null (created_by),
      constraint tasks_assignee_check check ((assignee_type is null) = (assignee_id is null))
    )
  `.execute(db);
  await sql`create index tasks_tenant_project_idx on tasks (tenant_id, project_id, created_at, id)`.execute(db);
  await sql`create index tasks_assignee_idx on tasks (tenant_id, assignee_type, assignee_id)`.execute(db);
  await sql`create index tasks_created_by_idx on tasks (created_by, tenant_id)`.execute(db);
  await sql`
    create table task_dependencies (
      tenant_id uuid not null references tenants (id) on delete cascade,
      task_id uuid not null,
      depends_on uuid not null,
      primary key (tenant_id, task_id, depends_on),
      constraint task_dependencies_task_fkey foreign key (tenant_id, task_id) references tasks (tenant_id, id) on delete cascade,
      constraint task_dependencies_depends_on_fkey foreign key (tenant_id, depends_on) references tasks (tenant_id, id) on delete cascade,
      constraint task_dependencies_not_itself check (task_id <> depends_on)
    )
  `.execute(db);
  await sql`create index task_dependencies_depends_on_idx on task_dependencies (tenant_id, depends_on)`.execute(db);
  await sql`
    create table task_submissions (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants (id) on delete cascade,
      task_id uuid not null,
      action_id text not null,
      idempotency_key text not null,
      request_hash text not null check (request_hash ~ '^[0-9a-f]{64}$'),
      response jsonb not null,
      submitted_by uuid,
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      constraint task_submissions_key unique (tenant_id, idempotency_key),
      constraint task_submissions_task_fkey foreign key (tenant_id, task_id) references tasks (tenant_id, id) on delete cascade,
      constraint task_submissions_submitted_by_fkey foreign key (tenant_id, submitted_by) references users (tenant_id, id) on delete set null (submitted_by)
    )
  `.execute(db);
  await sql`create index task_submissions_task_idx on task_submissions (tenant_id, task_id)`.execute(db);
  await sql`create index task_submissions_submitted_by_idx on task_submissions (submitted_by, tenant_id)`.execute(db);

  for (const table of ['tasks', 'task_dependencies', 'task_submissions']) {
    await sql`alter table ${sql.table(table)} enable row level security`.execute(db);
    await sql`
      create policy tenant_isolation on ${sql.table(table)}
        using (tenant_id = app_current_tenant())
        with check (tenant_id = app_current_tenant())
    `.execute(db);
    // The default privileges of 0001 grant UPDATE on the whole table; taken back here.
    await sql`revoke update on ${sql.table(table)} from specwright_app`.execute(db);
    await sql`grant select, insert, delete on ${sql.table(table)} to specwright_app`.execute(db);
  }
  await sql`grant update (status, updated_at, completed_at) on tasks to specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table task_submissions`.execute(db);
  await sql`drop table task_dependencies`.execute(db);
  await sql`drop table tasks`.execute(db);
}
