import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * A platform admin may have a tenant's owner issued a new API key only while the owner has done
 * nothing themselves (migration 0022). A password and a used or self-made key show that they have;
 * a bearer token (an identity provider's, or a session token) left no trace. A user's row now says
 * when a bearer token first authenticated them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Not in the app role's column grants (it may update email, name and password_hash only): only
  // the definer function below writes it.
  await sql`alter table users add column first_bearer_authenticated_at timestamptz`.execute(db);
  await markUsersWhoHaveActed(db);

  // find_user's lookup, plus the note; find_user stays for API nodes of the previous release while
  // a rolling deploy replaces them. The note is written once per user, ever: afterwards the row is
  // only read, so a request pays no write, no lock and no WAL (cheaper than authenticate_api_key's
  // once a minute). The first note waits for a lock on the row, as a key's use does: a note skipped
  // would let a later reissue pass. A read-only database (a standby, default_transaction_read_only)
  // lets the request write nothing either, so there the note is left for the next request, and the
  // sign-in goes on.
  await sql`
    create function app_private.authenticate_user(target_user_id uuid)
      returns table (user_id uuid, tenant_id uuid, is_platform_admin boolean)
      -- pg_temp last (it is searched first when left out): a caller's temporary table named users
      -- must never stand in for the real one in a function that runs with the owner's rights.
      language plpgsql volatile security definer set search_path = pg_catalog, public, pg_temp
      as $$
      begin
        return query select u.id, u.tenant_id, u.is_platform_admin from users u where u.id = target_user_id;
        -- Looked at before writing: any UPDATE, even of no row, fails in a read-only transaction,
        -- and the exception block (a subtransaction) is then entered once per user, not per request.
        if exists (select 1 from users u
                    where u.id = target_user_id and u.first_bearer_authenticated_at is null) then
          begin
            update users as u set first_bearer_authenticated_at = date_trunc('milliseconds', now())
              where u.id = target_user_id and u.first_bearer_authenticated_at is null;
          exception when read_only_sql_transaction then
            null;
          end;
        end if;
      end
      $$
  `.execute(db);
  await sql`revoke execute on function app_private.authenticate_user(uuid) from public`.execute(db);
  await sql`grant execute on function app_private.authenticate_user(uuid) to specwright_app`.execute(db);
}

/**
 * Users from before the column who had made something only a signed-in user makes (a project, an
 * invitation, a kit execution, a credential, an organization after the one their tenant's creation
 * made) had authenticated somehow, perhaps with a bearer token: noted at the earliest such row, so
 * an owner who has been at work through an identity provider is not taken for one whose key was lost.
 */
export async function markUsersWhoHaveActed(db: Kysely<any>): Promise<void> {
  await sql`
    update users as u set first_bearer_authenticated_at = acted.first_at
      from (
        select tenant_id, user_id, min(created_at) as first_at from (
          select tenant_id, created_by as user_id, created_at from projects where created_by is not null
          union all select tenant_id, invited_by, created_at from customer_invitations
          union all select tenant_id, created_by, created_at from kit_executions where created_by is not null
          union all select tenant_id, created_by, created_at from kit_credentials where created_by is not null
          union all select o.tenant_id, o.owner_id, o.created_at from organizations o
            join users owner on owner.tenant_id = o.tenant_id and owner.id = o.owner_id
            where o.created_at > owner.created_at
        ) as made
        group by tenant_id, user_id
      ) as acted
      where u.tenant_id = acted.tenant_id and u.id = acted.user_id and u.first_bearer_authenticated_at is null
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function app_private.authenticate_user(uuid)`.execute(db);
  await sql`alter table users drop column first_bearer_authenticated_at`.execute(db);
}
