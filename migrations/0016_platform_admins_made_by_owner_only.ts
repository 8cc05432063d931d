import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // A platform admin acts in every tenant; only the first run (the owner role) makes one. The app
  // role could set the flag on any user of its tenant, or create a user with it: now it may update
  // only the columns requests change, and insert users who are not platform admins. A restrictive
  // policy, since inserts name the column (false) and a column privilege would refuse those too.
  await sql`revoke update on users from specwright_app`.execute(db);
  await sql`grant update (name, email, password_hash) on users to specwright_app`.execute(db);
  await sql`
    create policy app_role_makes_no_platform_admin on users as restrictive for insert to specwright_app
      with check (not is_platform_admin)
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop policy app_role_makes_no_platform_admin on users`.execute(db);
  await sql`revoke update (name, email, password_hash) on users from specwright_app`.execute(db);
  await sql`grant update on users to specwright_app`.execute(db);
}
