import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { withTenant } from '../../db/tenant-transaction.ts';
import { insertUser } from '../tenants/tenants.repository.ts';

export interface LoginLookup {
  user_id: string;
  tenant_id: string;
  password_hash: string | null;
}

// Sign-in and sign-up run before a tenant is known: these go through definer functions (0002).

export async function findLogin(db: Kysely<Database>, email: string): Promise<LoginLookup | undefined> {
  const { rows } = await sql<LoginLookup>`select * from app_private.find_login(${email})`.execute(db);
  return rows[0];
}

export async function emailTaken(db: Kysely<Database>, email: string): Promise<boolean> {
  const { rows } = await sql<{ taken: boolean }>`select app_private.email_taken(${email}) as taken`.execute(db);
  return rows[0]?.taken === true;
}

/**
 * Replaces the password hash sign-in just verified, unless it changed meanwhile (a concurrent
 * sign-in already replaced it, or the password was changed): the newer hash stays.
 */
export async function replacePasswordHash(db: Kysely<Database>, login: LoginLookup, verified: string, replacement: string): Promise<void> {
  await withTenant(db, login.tenant_id, (trx) =>
    trx.updateTable('users').set({ password_hash: replacement }).where('id', '=', login.user_id).where('password_hash', '=', verified).execute(),
  );
}

/** Inserts a user with a password in the transaction's tenant. */
export async function insertUserWithPassword(db: Kysely<Database>, values: { tenantId: string; email: string; name: string; passwordHash: string }) {
  return insertUser(db, { ...values, isPlatformAdmin: false });
}

/**
 * A user's name and email, read by a definer function (migration 0014) rather than through row-level
 * security: a platform admin acting in another tenant (X-Tenant-ID) is still who they are there.
 */
export async function findUserIdentity(db: Kysely<Database>, userId: string): Promise<{ email: string; name: string } | undefined> {
  const { rows } = await sql<{ email: string; name: string }>`select * from app_private.user_identity(${userId})`.execute(db);
  return rows[0];
}

/** A user of the tenant, with what other domains show of them. */
export async function findUserInTenant(db: Kysely<Database>, tenantId: string, userId: string) {
  return db.selectFrom('users').select(['id', 'name', 'email']).where('tenant_id', '=', tenantId).where('id', '=', userId).executeTakeFirst();
}
