import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Counters that expire within the hour need no crash safety; unlogged tables skip the WAL,
  // which makes the per-request upsert much cheaper.
  await sql`alter table rate_limits set unlogged`.execute(db);

  // One round trip per API-key authentication: find the key and note its use (at most once a minute).
  // The caller still compares the stored hash itself, in constant time.
  await sql`
    create function app_private.authenticate_api_key(key_prefix text, presented_hash text)
      returns table (api_key_id uuid, tenant_id uuid, user_id uuid, key_hash text, revoked boolean, is_platform_admin boolean)
      language plpgsql volatile security definer set search_path = pg_catalog, public
      as $$
      begin
        return query
          select k.id, k.tenant_id, k.user_id, k.key_hash, k.revoked_at is not null, u.is_platform_admin
          from api_keys k join users u on u.id = k.user_id
          where k.prefix = key_prefix;
        -- Only a key that really matched counts as used.
        update api_keys as k set last_used_at = now()
          where k.prefix = key_prefix and k.key_hash = presented_hash and k.revoked_at is null
            and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute');
      end
      $$
  `.execute(db);
  await sql`revoke execute on function app_private.authenticate_api_key(text, text) from public`.execute(db);
  await sql`grant execute on function app_private.authenticate_api_key(text, text) to specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function app_private.authenticate_api_key(text, text)`.execute(db);
  await sql`alter table rate_limits set logged`.execute(db);
}
