import { createHmac } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ConfigError } from '../config.ts';

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
    if ((error as { code?: string }).code === '42710') return;
    throw explainRoleRefusal(error);
  }
}

const INSUFFICIENT_PRIVILEGE = '42501';

/** An owner that may not create or alter roles: say what to do instead of PostgreSQL's bare refusal. */
function explainRoleRefusal(error: unknown): unknown {
  if ((error as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) return error;
  return new ConfigError(
    `The database owner may not create or alter the role ${APP_ROLE} (${(error as Error).message}). ` +
      `Create it yourself — CREATE ROLE ${APP_ROLE} LOGIN PASSWORD '…' NOBYPASSRLS, owning nothing — and set APP_DATABASE_URL to connect as it.`,
  );
}

/** Lets the app role log in with a password derived from the server secret (embedded/dev mode). */
export async function enableAppRoleLogin(owner: Kysely<any>, serverSecret: string): Promise<string> {
  const password = createHmac('sha256', serverSecret).update('specwright-app-role-password').digest('base64url');
  await sql`alter role ${sql.id(APP_ROLE)} login password ${sql.lit(password)}`.execute(owner).catch((error: unknown) => {
    throw explainRoleRefusal(error);
  });
  return password;
}

export function appRoleUrl(ownerUrl: string, password: string): string {
  const url = new URL(ownerUrl);
  url.username = APP_ROLE;
  url.password = password;
  return url.toString();
}
