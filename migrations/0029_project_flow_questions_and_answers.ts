import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * The guided flow (seed §4.4): a project walks its phases by answering questions. Entering a phase
 * puts that phase's questions on the project (`flow_questions`), each with what the service
 * already guesses (`prefill`) and whether earlier answers made it moot (`suppressed`); a feature
 * selection question's options are the project's own feature candidates, so questions are rows of
 * the project, not a shared catalogue. An answer (`flow_answers`) is one per question (its unique key
 * names the tenant too, so it also indexes the key to the question); answering again replaces it.
 *
 * Both belong to their project and tenant (row-level security; foreign keys within the tenant, as
 * migration 0019 made every other one), and go with the project. Requests update a question's
 * prefill and an answer's own fields only (column grants).
 */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table flow_questions (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants (id) on delete cascade,
      project_id uuid not null,
      phase text not null check (phase in ('DISCOVERY', 'FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY', 'SPECIFICATION')),
      key text not null,
      position integer not null,
      text text not null,
      description text not null,
      variants jsonb not null,
      answer_type text not null check (answer_type in ('text', 'select', 'multiselect', 'boolean', 'number')),
      options jsonb not null default '[]'::jsonb,
      bounds jsonb,
      required boolean not null,
      weight integer not null check (weight > 0),
      prefill jsonb,
      suppressed boolean not null default false,
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      constraint flow_questions_project_fkey foreign key (tenant_id, project_id) references projects (tenant_id, id) on delete cascade,
      constraint flow_questions_project_key_key unique (project_id, key),
      constraint flow_questions_tenant_id_key unique (tenant_id, id)
    )
  `.execute(db);
  await sql`create index flow_questions_phase_order_idx on flow_questions (project_id, phase, position)`.execute(db);
  await sql`create index flow_questions_tenant_project_idx on flow_questions (tenant_id, project_id)`.execute(db);

  await sql`
    create table flow_answers (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants (id) on delete cascade,
      project_id uuid not null,
      question_id uuid not null,
      value jsonb not null,
      selected_variant text check (selected_variant in ('original', 'simplified')),
      confidence double precision check (confidence between 0 and 1),
      notes text,
      answered_by uuid,
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      updated_at timestamptz not null default date_trunc('milliseconds', now()),
      constraint flow_answers_project_fkey foreign key (tenant_id, project_id) references projects (tenant_id, id) on delete cascade,
      constraint flow_answers_question_fkey foreign key (tenant_id, question_id) references flow_questions (tenant_id, id) on delete cascade,
      constraint flow_answers_answered_by_fkey foreign key (tenant_id, answered_by) references users (tenant_id, id) on delete set null (answered_by),
      constraint flow_answers_question_key unique (question_id, tenant_id)
    )
  `.execute(db);
  await sql`create index flow_answers_tenant_project_idx on flow_answers (tenant_id, project_id)`.execute(db);
  await sql`create index flow_answers_answered_by_idx on flow_answers (answered_by, tenant_id)`.execute(db);

  for (const table of ['flow_questions', 'flow_answers']) {
    await sql`alter table ${sql.table(table)} enable row level security`.execute(db);
    await sql`
      create policy tenant_isolation on ${sql.table(table)}
        using (tenant_id = app_current_tenant())
        with check (tenant_id = app_current_tenant())
    `.execute(db);
    await sql`grant select, insert, delete on ${sql.table(table)} to specwright_app`.execute(db);
  }
  // Requests replace a question's guess and an answer, and nothing else of either: what a question
  // asks, which project a row belongs to and when an answer was first given stay as they were made.
  // (The default privileges of 0001 grant UPDATE on the whole table; taken back here.)
  await sql`revoke update on flow_questions, flow_answers from specwright_app`.execute(db);
  await sql`grant update (prefill) on flow_questions to specwright_app`.execute(db);
  await sql`grant update (value, selected_variant, confidence, notes, answered_by, updated_at) on flow_answers to specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table flow_answers`.execute(db);
  await sql`drop table flow_questions`.execute(db);
}
