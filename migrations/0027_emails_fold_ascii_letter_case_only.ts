import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * Emails are one person whatever the letter case. The unique index and sign-in's definer functions
 * folded it with lower() under the database's own locale, while the service folds it in JavaScript
 * (invitations, the sign-in throttle): under a Turkish locale, which a database `DATABASE_URL` names
 * may have, lower('I') is 'ı', so 'IRIS@…' and 'iris@…' were two users, and one could not sign in
 * as the other. Emails are ASCII (the inputs take nothing else), and `lower(… collate "C")` folds
 * A–Z only, on every database, as the service's key does.
 */

export async function up(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from (select 1 from users group by lower(email collate "C") having count(*) > 1) clashes
  `.execute(db);
  const clashes = rows[0]!.n;
  if (clashes > 0) {
    throw new Error(
      `${clashes} ${clashes === 1 ? 'email belongs' : 'emails belong'} to more than one user once ASCII letter case is ignored (the database's locale folded them apart). ` +
        `Find them with: select lower(email collate "C"), array_agg(id) from users group by 1 having count(*) > 1; ` +
        `then give all but one of each another email, and run the migration again.`,
    );
  }
  await sql`drop index users_email_key`.execute(db);
  await sql`create unique index users_email_key on users (lower(email collate "C"))`.execute(db);
  await sql`
    create or replace function app_private.find_login(target_email text)
      returns table (user_id uuid, tenant_id uuid, password_hash text)
      language sql stable security definer set search_path = pg_catalog, public, pg_temp
      as $$ select u.id, u.tenant_id, u.password_hash from public.users u where lower(u.email collate "C") = lower(target_email collate "C") $$
  `.execute(db);
  await sql`
    create or replace function app_private.email_taken(target_email text) returns boolean
      language sql stable security definer set search_path = pg_catalog, public, pg_temp
      as $$ select exists (select 1 from public.users u where lower(u.email collate "C") = lower(target_email collate "C")) $$
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function app_private.email_taken(target_email text) returns boolean
      language sql stable security definer set search_path = pg_catalog, public, pg_temp
      as $$ select exists (select 1 from users where lower(email) = lower(target_email)) $$
  `.execute(db);
  await sql`
    create or replace function app_private.find_login(target_email text)
      returns table (user_id uuid, tenant_id uuid, password_hash text)
      language sql stable security definer set search_path = pg_catalog, public, pg_temp
      as $$ select u.id, u.tenant_id, u.password_hash from users u where lower(u.email) = lower(target_email) $$
  `.execute(db);
  await sql`drop index users_email_key`.execute(db);
  await sql`create unique index users_email_key on users (lower(email))`.execute(db);
}
