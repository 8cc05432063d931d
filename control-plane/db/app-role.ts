import { createHmac } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

/** The role every request runs as: it owns no table and has no BYPASSRLS, so policies always apply. */
export const APP_ROLE = 'specwright_app';

export async function ensureAppRoleExists(owner: Kysely<any>): Promise<void> {
  try {
    await sql`
      do $$ begin
        if not exists (select from pg_roles where rolname = ${sql.lit(APP_ROLE)}) then
          create role ${sql.id(APP_ROLE)} nologin nosuperuser nocreatedb nocreaterole nobypassrls;
        end if;
      end $$
    `.execute(owner);
  } catch (error) {
    // Two processes booting at once: the other one created it first.
    if ((error as { code?: string }).code !== '42710') throw error;
  }
}

/** Lets the app role log in with a password derived from the server secret (embedded/dev mode). */
export async function enableAppRoleLogin(owner: Kysely<any>, serverSecret: string): Promise<string> {
  const password = createHmac('sha256', serverSecret).update('specwright-app-role-password').digest('base64url');
  await sql`alter role ${sql.id(APP_ROLE)} login password ${sql.lit(password)}`.execute(owner);
  return password;
}

export function appRoleUrl(ownerUrl: string, password: string): string {
  const url = new URL(ownerUrl);
  url.username = APP_ROLE;
  url.password = password;
  return url.toString();
}
