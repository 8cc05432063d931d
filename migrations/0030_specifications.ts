import { sql, type Kysely } from 'kysely';
import { up as enqueueJobAsOf0026 } from './0026_requests_enqueue_only_their_own_jobs.ts';

// Frozen in time: this file never imports application code (only an earlier migration, itself frozen).

/**
 * Compiled specifications (seed §4.7): `POST /specification/compile` stores what the project's
 * flow says at that moment (`input`) and enqueues a compile; the worker turns the input into the
 * specification (`spec`, `validation`) and marks it completed, or failed once its attempts are
 * spent. A specification belongs to its project and tenant (row-level security, keys within the
 * tenant) and goes with the project. `version` counts a project's compiles: 1, 2, …
 *
 * Requests insert a specification and read it; only the worker (the owner) writes its outcome.
 * The one job a request may now enqueue besides a kit execution is the compile of a
 * specification of its own tenant, under that specification's key, with a payload of its id and
 * its tenant's and nothing else (see migration 0026).
 */

const ENQUEUE_HEAD = sql`
  create or replace function app_private.enqueue_job(identifier text, payload json, job_key text default null,
                                                     max_attempts integer default null, run_at timestamptz default null,
                                                     priority integer default null)
    returns bigint
    language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp
`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table specifications (
      id uuid primary key default gen_random_uuid(),
      tenant_id uuid not null references tenants (id) on delete cascade,
      project_id uuid not null,
      version integer not null check (version > 0),
      status text not null default 'compiling' check (status in ('compiling', 'completed', 'failed')),
      options jsonb not null,
      input jsonb not null,
      spec jsonb,
      validation jsonb,
      error_message text,
      created_by uuid,
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      compiled_at timestamptz,
      constraint specifications_project_fkey foreign key (tenant_id, project_id) references projects (tenant_id, id) on delete cascade,
      constraint specifications_created_by_fkey foreign key (tenant_id, created_by) references users (tenant_id, id) on delete set null (created_by),
      constraint specifications_project_version_key unique (project_id, version)
    )
  `.execute(db);
  await sql`create index specifications_tenant_project_idx on specifications (tenant_id, project_id)`.execute(db);
  await sql`create index specifications_created_by_idx on specifications (created_by, tenant_id)`.execute(db);
  await sql`alter table specifications enable row level security`.execute(db);
  await sql`
    create policy tenant_isolation on specifications
      using (tenant_id = app_current_tenant())
      with check (tenant_id = app_current_tenant())
  `.execute(db);
  // The default privileges of 0001 grant SELECT, INSERT, UPDATE and DELETE on the whole table:
  // INSERT and UPDATE are taken back, so a request can neither write an outcome (status, spec,
  // validation, error) nor rewrite the input a compile takes, nor insert a specification compiled.
  await sql`revoke insert, update on specifications from specwright_app`.execute(db);
  await sql`grant select, delete on specifications to specwright_app`.execute(db);
  await sql`grant insert (tenant_id, project_id, version, options, input, created_by) on specifications to specwright_app`.execute(db);

  await enqueueJobAsOf0030(db);
}

/** `app_private.enqueue_job` as this migration makes it (a later migration's down restores it so). */
export async function enqueueJobAsOf0030(db: Kysely<any>): Promise<void> {
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
  // Back to the function as migration 0026 made it, to the letter.
  await enqueueJobAsOf0026(db);
  await sql`drop table specifications`.execute(db);
}
