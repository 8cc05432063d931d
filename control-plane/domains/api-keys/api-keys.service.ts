import type { Kysely } from 'kysely';
import type { ApiKeyRow, Database } from '../../db/database.ts';
import { generateApiKey } from '../../auth/api-key-format.ts';
import type { Principal } from '../../auth/principal.ts';
import { conflict, forbidden, notFound } from '../../errors/app-error.ts';
import type { Paging } from '../../http/paging.ts';
import type { ApiKey } from './api-keys.schema.ts';
import { countActiveApiKeysOfUserLocked, findApiKeyOfUser, insertApiKey, listApiKeysOfUser, revokeApiKeyOfUser } from './api-keys.repository.ts';

function apiKeyRowToApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

/**
 * Keys one user may hold at once. Each key is a caller of its own to the rate limits, so keys
 * without number would multiply every per-caller budget (10,000 were minted in 14 s).
 */
export const MAX_ACTIVE_API_KEYS_PER_USER = 50;

/**
 * Creates a key and returns it in full; this is the only time the key itself is ever shown.
 * `issuedByPlatform`: made for a tenant's owner and handed to a platform admin (see tenants.service.ts).
 */
export async function issueApiKey(
  db: Kysely<Database>,
  owner: { tenantId: string; userId: string },
  name: string,
  { issuedByPlatform = false }: { issuedByPlatform?: boolean } = {},
): Promise<ApiKey & { key: string }> {
  if ((await countActiveApiKeysOfUserLocked(db, owner.tenantId, owner.userId)) >= MAX_ACTIVE_API_KEYS_PER_USER) {
    throw conflict(`A user holds at most ${MAX_ACTIVE_API_KEYS_PER_USER} API keys that are not revoked; revoke one first`, { maxActiveKeys: MAX_ACTIVE_API_KEYS_PER_USER });
  }
  const generated = generateApiKey();
  const row = await insertApiKey(db, { ...owner, name, prefix: generated.prefix, keyHash: generated.keyHash, issuedByPlatform });
  return { ...apiKeyRowToApiKey(row), key: generated.key };
}

/**
 * Developer settings manage the caller's own keys, which live in the caller's home tenant. A
 * platform admin acting in another tenant (X-Tenant-ID) would otherwise create a key stored there —
 * one their own list never shows and that authenticates as a user of that tenant — so it is refused.
 */
function ownKeysOf(principal: Principal): { tenantId: string; userId: string } {
  if (principal.tenantId !== principal.homeTenantId) throw forbidden('API keys are managed in your own tenant: send this request without X-Tenant-ID');
  return { tenantId: principal.tenantId, userId: principal.userId };
}

export async function issueApiKeyForCaller(db: Kysely<Database>, principal: Principal, name: string): Promise<ApiKey & { key: string }> {
  return issueApiKey(db, ownKeysOf(principal), name);
}

export async function listApiKeys(db: Kysely<Database>, principal: Principal, filter: Paging & { status?: 'active' | 'revoked' | undefined }) {
  const owner = ownKeysOf(principal);
  const { rows, ...page } = await listApiKeysOfUser(db, owner.tenantId, owner.userId, filter);
  return { apiKeys: rows.map(apiKeyRowToApiKey), ...page };
}

/** Revocation takes effect on the next request: authentication reads the row every time. */
export async function revokeApiKey(db: Kysely<Database>, principal: Principal, keyId: string): Promise<ApiKey> {
  const owner = ownKeysOf(principal);
  const revoked = await revokeApiKeyOfUser(db, owner.tenantId, owner.userId, keyId);
  if (revoked) return apiKeyRowToApiKey(revoked);
  const existing = await findApiKeyOfUser(db, owner.tenantId, owner.userId, keyId);
  if (!existing) throw notFound('The API key');
  return apiKeyRowToApiKey(existing);
}

/** Whether the user's key exists and is not revoked: what a download link handed out through it re-checks. */
export async function apiKeyIsActive(db: Kysely<Database>, owner: { tenantId: string; userId: string }, keyId: string): Promise<boolean> {
  const key = await findApiKeyOfUser(db, owner.tenantId, owner.userId, keyId);
  return key !== undefined && key.revoked_at === null;
}
