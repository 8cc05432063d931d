import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * Rotation's advisory lock (credential-vault.ts), taken shared by every request that reads or issues
 * an organization's key: a rotation waits for the credentials being stored under the old key, and
 * a store waits for a rotation under way, so none is left sealed to a key a rotation just retired.
 */
const ROTATION_LOCK_KEY = 7_305_221_911;

export async function up(db: Kysely<any>): Promise<void> {
  // Each organization's clients seal credentials to a key of its own. With one key for the whole
  // server, a value client-sealed for one organization could be stored by another (of any tenant),
  // whose kit then received the secret: the API cannot look inside a client-sealed value to tell.
  // A worker opens a credential only with its organization's keys, so such a value no longer opens.
  // Keys without an organization are the server-wide ones of before: they still open what was
  // sealed to them, and no new value is sealed to them.
  await sql`alter table credential_keys add column organization_id uuid references organizations (id) on delete cascade`.execute(db);
  // An organization's key is issued by the API, whose role may write it through the function below:
  // so may anything running as that role (an injected statement). Its tag, an HMAC under a key
  // derived from SERVER_SECRET over its id, organization and public key, tells a key the service
  // made from one planted: the API hands out, and workers open with, tagged keys only.
  await sql`alter table credential_keys add column public_key_tag text`.execute(db);
  await sql`alter table credential_keys add constraint credential_keys_organization_keys_tagged check (organization_id is null or public_key_tag is not null)`.execute(db);
  await sql`create index credential_keys_organization_id_idx on credential_keys (organization_id) where organization_id is not null`.execute(db);
  // One current key per organization: two requests issuing its first key at once keep one.
  await sql`create unique index credential_keys_one_current_per_organization on credential_keys (organization_id) where retired_at is null`.execute(db);
  await sql`drop function app_private.current_credential_key()`.execute(db);

  // The requests' role reads an organization of its tenant's current key, never a private key.
  await sql`
    create function app_private.organization_credential_key(target_organization_id uuid)
      returns table (key_id text, public_key text, public_key_tag text)
      language plpgsql volatile security definer set search_path = pg_catalog, public
      as $$
      begin
        perform pg_advisory_xact_lock_shared(${sql.lit(ROTATION_LOCK_KEY)});
        return query
          select k.key_id, k.public_key, k.public_key_tag
            from credential_keys k
            join organizations o on o.id = k.organization_id
           where k.organization_id = target_organization_id and k.retired_at is null
             and o.tenant_id = app_current_tenant();
      end
      $$
  `.execute(db);
  // ... and issues an organization of its tenant its first key: the private key sealed by the API
  // (with the key derived from SERVER_SECRET) and never read back. A key issued meanwhile by another
  // request wins; either way the current key is returned. Nothing is issued while a rotation runs.
  await sql`
    create function app_private.issue_organization_credential_key(target_organization_id uuid, new_key_id text, new_public_key text, new_sealed_private_key text, new_public_key_tag text)
      returns table (key_id text, public_key text, public_key_tag text)
      language plpgsql volatile security definer set search_path = pg_catalog, public
      as $$
      begin
        if not exists (select 1 from organizations o where o.id = target_organization_id and o.tenant_id = app_current_tenant()) then
          return;
        end if;
        perform pg_advisory_xact_lock_shared(${sql.lit(ROTATION_LOCK_KEY)});
        insert into credential_keys (key_id, organization_id, public_key, sealed_private_key, public_key_tag)
             values (new_key_id, target_organization_id, new_public_key, new_sealed_private_key, new_public_key_tag)
        on conflict (organization_id) where retired_at is null do nothing;
        return query select k.key_id, k.public_key, k.public_key_tag from credential_keys k where k.organization_id = target_organization_id and k.retired_at is null;
      end
      $$
  `.execute(db);
  for (const signature of ['organization_credential_key(uuid)', 'issue_organization_credential_key(uuid, text, text, text, text)']) {
    await sql`revoke execute on function ${sql.raw(`app_private.${signature}`)} from public`.execute(db);
    await sql`grant execute on function ${sql.raw(`app_private.${signature}`)} to specwright_app`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function app_private.issue_organization_credential_key(uuid, text, text, text, text)`.execute(db);
  await sql`drop function app_private.organization_credential_key(uuid)`.execute(db);
  await sql`drop index credential_keys_one_current_per_organization`.execute(db);
  await sql`drop index credential_keys_organization_id_idx`.execute(db);
  await sql`alter table credential_keys drop constraint credential_keys_organization_keys_tagged`.execute(db);
  await sql`alter table credential_keys drop column public_key_tag`.execute(db);
  await sql`alter table credential_keys drop column organization_id`.execute(db);
  // As 0004 made it (its grant came from that migration's grant on all functions).
  await sql`
    create function app_private.current_credential_key()
      returns table (key_id text, public_key text)
      language sql stable security definer set search_path = pg_catalog, public
      as $$ select k.key_id, k.public_key from credential_keys k where k.retired_at is null order by k.created_at desc limit 1 $$
  `.execute(db);
  await sql`revoke execute on function app_private.current_credential_key() from public`.execute(db);
  await sql`grant execute on function app_private.current_credential_key() to specwright_app`.execute(db);
}
