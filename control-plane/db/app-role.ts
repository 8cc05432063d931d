import { createHmac } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
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

/** The app role's password when APP_DATABASE_URL is unset: derived from SERVER_SECRET, so every node agrees. */
export function appRolePassword(serverSecret: string): string {
  return createHmac('sha256', serverSecret).update('specwright-app-role-password').digest('base64url');
}

const INVALID_PASSWORD = '28P01';

/**
 * Whether the app role accepts `password`, tried before anything sets it: a role that may not log in
 * yet (first setup) accepts any; one that logs in with another password was set up with another
 * SERVER_SECRET (or by an operator), and replacing it would break every node that uses it.
 */
export async function appRoleAcceptsPassword(owner: Kysely<any>, ownerUrl: string, password: string): Promise<boolean> {
  const { rows } = await sql<{ rolcanlogin: boolean }>`select rolcanlogin from pg_roles where rolname = ${APP_ROLE}`.execute(owner);
  if (!rows[0]?.rolcanlogin) return true;
  const client = new pg.Client({ connectionString: appRoleUrl(ownerUrl, password), application_name: 'specwright-boot' });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    if ((error as { code?: string }).code === INVALID_PASSWORD) return false;
    throw new Error(`could not log in as ${APP_ROLE} to check its password: ${(error as Error).message}`);
  }
  await client.end().catch(() => {});
  return true;
}

/** Lets the app role log in with the password derived from the server secret. */
export async function enableAppRoleLogin(owner: Kysely<any>, serverSecret: string): Promise<string> {
  const password = appRolePassword(serverSecret);
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
