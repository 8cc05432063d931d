import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * A search path that does not name pg_temp searches it first, before pg_catalog, for tables and
 * views. The functions below pinned `search_path = pg_catalog, public` and read `users`,
 * `organizations`, `kits` unqualified, so a request could make a temporary table or view of such a
 * name (PUBLIC may create temporary tables) and have the function read it: in a security-definer
 * function that is the owner reading it, and calling whatever the view calls with the owner's
 * rights (a superuser's, on the embedded database). Listing pg_temp last makes it searched last.
 *
 * user_identity named any user of any tenant; it is for a platform admin's own name while acting in
 * another tenant, so it now names a user of the transaction's tenant, or a platform admin.
 */
const PINNED = [
  'app_private.authenticate_api_key(text, text)',
  'app_private.email_taken(text)',
  'app_private.find_invitation(text)',
  'app_private.find_login(text)',
  'app_private.find_user(uuid)',
  'app_private.issue_organization_credential_key(uuid, text, text, text, text)',
  'app_private.organization_credential_key(uuid)',
  'app_private.slug_taken(text)',
  'app_private.tenant_exists(uuid)',
  'app_private.enqueue_job(text, json, text, integer, timestamptz, integer)',
  'app_private.kit_executions_run_kits_of_their_tenant()',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const signature of PINNED) await sql`alter function ${sql.raw(signature)} set search_path = pg_catalog, public, pg_temp`.execute(db);
  await sql`
    create or replace function app_private.user_identity(target_user_id uuid)
      returns table (email text, name text)
      language sql stable security definer set search_path = pg_catalog, public, pg_temp
      as $$
        select u.email, u.name from public.users u
         where u.id = target_user_id and (u.tenant_id = app_current_tenant() or u.is_platform_admin)
      $$
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function app_private.user_identity(target_user_id uuid)
      returns table (email text, name text)
      language sql stable security definer set search_path = pg_catalog, public
      as $$ select u.email, u.name from users u where u.id = target_user_id $$
  `.execute(db);
  for (const signature of PINNED) await sql`alter function ${sql.raw(signature)} set search_path = pg_catalog, public`.execute(db);
}
