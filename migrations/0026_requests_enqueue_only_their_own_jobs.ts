import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * app_private.enqueue_job is the app role's only way into graphile-worker, and runs with the
 * owner's rights. It passed on whatever it was given: any task, job key, run_at and priority. A job
 * key names the job it replaces, and an execution's job is keyed `kit-execution:<execution id>`, so
 * a request could replace another tenant's waiting execution with a job that never runs, enqueue
 * the worker's own jobs (the reaper, maintenance) or a key rotation, and jump the queue.
 *
 * A caller that may add jobs itself (the owner, the worker's role: it has USAGE on graphile_worker)
 * is not held to anything. A request (the app role has no such USAGE) may enqueue the run of an
 * execution of its own tenant, under that execution's key, and a key rotation a platform admin
 * asked for; its run_at is now, its priority not below 0 (the service's is a count of the tenant's
 * waiting executions), and its attempts between 1 and 25.
 */

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function app_private.enqueue_job(identifier text, payload json, job_key text default null,
                                                       max_attempts integer default null, run_at timestamptz default null,
                                                       priority integer default null)
      returns bigint
      language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp
      as $$
      declare
        tenant constant uuid := app_current_tenant();
        execution uuid;
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
  await sql`
    create or replace function app_private.enqueue_job(identifier text, payload json, job_key text default null,
                                                       max_attempts integer default null, run_at timestamptz default null,
                                                       priority integer default null)
      returns bigint
      language sql volatile security definer set search_path = pg_catalog, public, pg_temp
      as $$
        select (graphile_worker.add_job(identifier, payload, job_key => job_key,
                                        max_attempts => max_attempts, run_at => run_at, priority => priority)).id
      $$
  `.execute(db);
}
