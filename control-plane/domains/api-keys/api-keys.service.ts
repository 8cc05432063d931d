import type { Kysely } from 'kysely';
import type { ApiKeyRow, Database } from '../../db/database.ts';
import { generateApiKey } from '../../auth/api-key-format.ts';
import type { Principal } from '../../auth/principal.ts';
import { forbidden, notFound } from '../../errors/app-error.ts';
import type { ApiKey } from './api-keys.schema.ts';
import { findApiKeyOfUser, insertApiKey, listApiKeysOfUser, revokeApiKeyOfUser } from './api-keys.repository.ts';

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

/** Creates a key and returns it in full; this is the only time the key itself is ever shown. */
export async function issueApiKey(db: Kysely<Database>, owner: { tenantId: string; userId: string }, name: string): Promise<ApiKey & { key: string }> {
  const generated = generateApiKey();
  const row = await insertApiKey(db, { ...owner, name, prefix: generated.prefix, keyHash: generated.keyHash });
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

export async function listApiKeys(db: Kysely<Database>, principal: Principal): Promise<ApiKey[]> {
  const owner = ownKeysOf(principal);
  return (await listApiKeysOfUser(db, owner.tenantId, owner.userId)).map(apiKeyRowToApiKey);
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
