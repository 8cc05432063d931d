import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';

export interface ApiKeyLookup {
  api_key_id: string;
  tenant_id: string;
  user_id: string;
  key_hash: string;
  revoked: boolean;
  is_platform_admin: boolean;
}

export interface UserLookup {
  user_id: string;
  tenant_id: string;
  is_platform_admin: boolean;
}

// These run before a tenant is known, through definer functions (migrations 0001, 0003 and 0023).

/** Finds the key by prefix and, when `presentedHash` matches, notes its use — one round trip. */
export async function authenticateApiKey(db: Kysely<Database>, prefix: string, presentedHash: string): Promise<ApiKeyLookup | undefined> {
  const { rows } = await sql<ApiKeyLookup>`select * from app_private.authenticate_api_key(${prefix}, ${presentedHash})`.execute(db);
  return rows[0];
}

/**
 * Finds the user a verified bearer token names and, the first time, notes that a bearer token
 * authenticated them (users.first_bearer_authenticated_at, by the database's clock) — one round trip.
 */
export async function authenticateUser(db: Kysely<Database>, userId: string): Promise<UserLookup | undefined> {
  const { rows } = await sql<UserLookup>`select * from app_private.authenticate_user(${userId})`.execute(db);
  return rows[0];
}

export async function tenantExists(db: Kysely<Database>, tenantId: string): Promise<boolean> {
  const { rows } = await sql<{ exists: boolean }>`select app_private.tenant_exists(${tenantId}) as exists`.execute(db);
  return rows[0]?.exists === true;
}
