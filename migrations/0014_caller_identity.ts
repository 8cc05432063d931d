import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // GET /api/me names the caller. A platform admin acting in another tenant (X-Tenant-ID) cannot
  // read their own row there through row-level security, so it is read by this definer function,
  // which returns just the name and email of the one user asked for.
  await sql`
    create function app_private.user_identity(target_user_id uuid)
      returns table (email text, name text)
      language sql stable security definer set search_path = pg_catalog, public
      as $$ select u.email, u.name from users u where u.id = target_user_id $$
  `.execute(db);
  await sql`revoke execute on function app_private.user_identity(uuid) from public`.execute(db);
  await sql`grant execute on function app_private.user_identity(uuid) to specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function app_private.user_identity(uuid)`.execute(db);
}
