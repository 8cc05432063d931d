import { sql, type Kysely } from 'kysely';
import { enqueueJobAsOf0030 } from './0030_specifications.ts';

// Frozen in time: this file never imports application code (only an earlier migration, itself frozen).

/**
 * Agent executions (seed §4.5, DESIGN §7): `POST /agents/generate-spec` stores what the project's
 * flow says (`input`), the strategy, the agents and the budget, and enqueues the run; the worker
 * makes the agents' calls one step at a time, records each call in `agent_calls` (provider, model,
 * prompt hash, tokens, cost, output), and ends the execution completed — with the specification it
 * assembled — or failed, with an error code and a checkpoint to resume from.
 *
 * Requests insert an execution, read executions and calls, delete them with their project, and
 * resume a failed execution: the only update a request may make (column grants and a restrictive
 * policy) turns a failed execution back to running, with a budget of its choosing. Everything
 * else about an execution, and every call, only the worker (the owner) writes. The one job a
 * request may now enqueue besides a kit execution and a compile is the run of an agent execution
 * of its own tenant that is running, under its key, with its ids as the whole payload; and a
 * request no longer chooses how many attempts a compile or an agent run gets (3, as the service asks).
 */

const ENQUEUE_HEAD = sql`
  create or replace function app_private.enqueue_job(identifier text, payload json, job_key text default null,
                                                     max_attempts integer default null, run_at timestamptz default null,
                                                     priority integer default null)
    returns bigint
    language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp
`;

export async function up(db: Kysely<any>): Promise<void> {
  // An execution names the specification it assembled within its tenant, as every other key does.
  await sql`alter table specifications add constraint specifications_tenant_id_key unique (tenant_id, id)`.execute(db);
  await sql`
    create table agent_executions (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants (id) on delete cascade,
      project_id uuid not null,
      strategy text not null check (strategy in ('sequential', 'parallel', 'hierarchical', 'debate')),
      agents text[] not null check (cardinality(agents) between 1 and 16),
      status text not null default 'running' check (status in ('running', 'completed', 'failed', 'paused')),
      options jsonb not null,
      input jsonb not null,
      token_limit bigint not null check (token_limit > 0),
      cost_limit_usd numeric(15, 9) not null check (cost_limit_usd >= 0),
      tokens_used bigint not null default 0,
      cost_usd numeric(15, 9) not null default 0,
      total_steps integer not null check (total_steps > 0),
      completed_steps integer not null default 0,
      current_step text,
      specification_id uuid,
      validation_passed boolean,
      error_code text,
      error_message text,
      checkpoint uuid,
      created_by uuid,
      started_at timestamptz not null default date_trunc('milliseconds', now()),
      updated_at timestamptz not null default date_trunc('milliseconds', now()),
      completed_at timestamptz,
      constraint agent_executions_tenant_id_key unique (tenant_id, id),
      constraint agent_executions_project_fkey foreign key (tenant_id, project_id) references projects (tenant_id, id) on delete cascade,
      constraint agent_executions_specification_fkey foreign key (tenant_id, specification_id) references specifications (tenant_id, id) on delete set null (specification_id),
      constraint agent_executions_created_by_fkey foreign key (tenant_id, created_by) references users (tenant_id, id) on delete set null (created_by),
      constraint agent_executions_failure_check check ((status = 'failed') = (error_code is not null))
    )
  `.execute(db);
  await sql`create index agent_executions_tenant_project_idx on agent_executions (tenant_id, project_id)`.execute(db);
  await sql`create index agent_executions_specification_idx on agent_executions (specification_id, tenant_id)`.execute(db);
  await sql`create index agent_executions_created_by_idx on agent_executions (created_by, tenant_id)`.execute(db);
  await sql`
    create table agent_calls (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants (id) on delete cascade,
      execution_id uuid not null,
      step integer not null check (step > 0),
      agent text not null,
      task text not null check (task in ('plan', 'draft', 'revise', 'review')),
      provider text not null,
      model text not null,
      prompt_hash text not null check (prompt_hash ~ '^[0-9a-f]{64}$'),
      input_tokens integer not null check (input_tokens >= 0),
      output_tokens integer not null check (output_tokens >= 0),
      cost_usd numeric(15, 9) not null check (cost_usd >= 0),
      finish_reason text not null check (finish_reason in ('stop', 'length', 'error')),
      output jsonb,
      created_at timestamptz not null default date_trunc('milliseconds', clock_timestamp()),
      constraint agent_calls_execution_fkey foreign key (tenant_id, execution_id) references agent_executions (tenant_id, id) on delete cascade,
      constraint agent_calls_output_check check ((finish_reason = 'stop') = (output is not null))
    )
  `.execute(db);
  // A step is done once: its one call that finished. Calls cut short by the budget stay on record.
  await sql`create unique index agent_calls_step_done_key on agent_calls (execution_id, step) where output is not null`.execute(db);
  await sql`create index agent_calls_execution_idx on agent_calls (tenant_id, execution_id, created_at)`.execute(db);

  for (const table of ['agent_executions', 'agent_calls']) {
    await sql`alter table ${sql.table(table)} enable row level security`.execute(db);
    await sql`
      create policy tenant_isolation on ${sql.table(table)}
        using (tenant_id = app_current_tenant())
        with check (tenant_id = app_current_tenant())
    `.execute(db);
    // The default privileges of 0001 grant SELECT, INSERT, UPDATE and DELETE on the whole table.
    await sql`revoke insert, update on ${sql.table(table)} from specwright_app`.execute(db);
    await sql`grant select, delete on ${sql.table(table)} to specwright_app`.execute(db);
  }
  await sql`
    grant insert (tenant_id, project_id, strategy, agents, options, input, token_limit, cost_limit_usd, total_steps, created_by)
      on agent_executions to specwright_app
  `.execute(db);
  await sql`grant update (status, error_code, error_message, checkpoint, token_limit, cost_limit_usd, updated_at) on agent_executions to specwright_app`.execute(db);
  // What a request may insert is a running execution with nothing spent; what it may update, a
  // failed one back to running with its failure cleared (a resume). The outcome is the worker's.
  // A resume is stamped with its own time (the sweep of stranded runs goes by updated_at: a stamp
  // in the future would hide a run with no job from it for good) and leaves room in the budget.
  await sql`
    create policy requests_insert_fresh on agent_executions as restrictive for insert to specwright_app
      with check (status = 'running' and tokens_used = 0 and cost_usd = 0 and completed_steps = 0 and specification_id is null and error_code is null)
  `.execute(db);
  await sql`
    create policy requests_only_resume on agent_executions as restrictive for update to specwright_app
      using (status = 'failed' and checkpoint is not null)
      with check (status = 'running' and error_code is null and error_message is null and checkpoint is null
                  and updated_at = date_trunc('milliseconds', now()) and token_limit > tokens_used and cost_limit_usd >= cost_usd)
  `.execute(db);

  await sql`
    ${ENQUEUE_HEAD}
    as $$
    declare
      tenant constant uuid := app_current_tenant();
      execution uuid;
      specification uuid;
    begin
      if not has_schema_privilege(session_user, 'graphile_worker', 'USAGE') then
        if identifier = 'kits.execute' then
          execution := (payload ->> 'executionId')::uuid;
          if tenant is null
             or (payload ->> 'tenantId')::uuid is distinct from tenant
             or job_key is distinct from 'kit-execution:' || execution::text
             or not exists (select 1 from public.kit_executions e where e.id = execution and e.tenant_id = tenant) then
            raise exception 'a request may enqueue only the run of an execution of its own tenant, under that execution''s key'
              using errcode = 'insufficient_privilege';
          end if;
        elsif identifier = 'specifications.compile' then
          specification := (payload ->> 'specificationId')::uuid;
          -- The payload is the two ids and nothing else, written as the worker reads them: a
          -- payload it cannot parse (an id as {…}) would fail the job for good and leave the
          -- specification compiling, and anything more would carry data into the shared queue.
          if tenant is null
             or payload::jsonb is distinct from jsonb_build_object('specificationId', specification::text, 'tenantId', tenant::text)
             or job_key is distinct from 'specification:' || specification::text
             or not exists (select 1 from public.specifications s where s.id = specification and s.tenant_id = tenant) then
            raise exception 'a request may enqueue only the compile of a specification of its own tenant, under that specification''s key'
              using errcode = 'insufficient_privilege';
          end if;
          -- Its attempts are the service's (COMPILE_JOB_ATTEMPTS), not the request's to choose.
          max_attempts := 3;
        elsif identifier = 'agents.generate_spec' then
          execution := (payload ->> 'executionId')::uuid;
          -- As a compile's: the two ids, exactly; and only for an execution that is running.
          if tenant is null
             or payload::jsonb is distinct from jsonb_build_object('executionId', execution::text, 'tenantId', tenant::text)
             or job_key is distinct from 'agent-execution:' || execution::text
             or not exists (select 1 from public.agent_executions e where e.id = execution and e.tenant_id = tenant and e.status = 'running') then
            raise exception 'a request may enqueue only the run of a running agent execution of its own tenant, under that execution''s key'
              using errcode = 'insufficient_privilege';
          end if;
          -- As a compile's: the service's AGENT_JOB_ATTEMPTS.
          max_attempts := 3;
        elsif identifier = 'credentials.rotate_keys' then
          if job_key is distinct from 'credentials.rotate_keys'
             or not exists (select 1 from public.users u where u.id = (payload ->> 'requestedBy')::uuid and u.is_platform_admin) then
            raise exception 'only a platform admin has the credential keys rotated' using errcode = 'insufficient_privilege';
          end if;
        else
          raise exception 'a request may not enqueue %', identifier using errcode = 'insufficient_privilege';
        end if;
        run_at := null;
        priority := greatest(coalesce(priority, 0), 0);
        max_attempts := least(greatest(coalesce(max_attempts, 25), 1), 25);
      end if;
      return (graphile_worker.add_job(identifier, payload, job_key => job_key, max_attempts => max_attempts,
                                      run_at => run_at, priority => priority)).id;
    end
    $$
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Back to the function as migration 0030 made it, to the letter.
  await enqueueJobAsOf0030(db);
  await sql`drop table agent_calls`.execute(db);
  await sql`drop table agent_executions`.execute(db);
  await sql`alter table specifications drop constraint specifications_tenant_id_key`.execute(db);
}
