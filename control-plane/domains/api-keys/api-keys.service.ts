import type { Kysely } from 'kysely';
import type { ApiKeyRow, Database } from '../../db/database.ts';
import { generateApiKey } from '../../auth/api-key-format.ts';
import { notFound } from '../../errors/app-error.ts';
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

export async function listApiKeys(db: Kysely<Database>, owner: { tenantId: string; userId: string }): Promise<ApiKey[]> {
  return (await listApiKeysOfUser(db, owner.tenantId, owner.userId)).map(apiKeyRowToApiKey);
}

/** Revocation takes effect on the next request: authentication reads the row every time. */
export async function revokeApiKey(db: Kysely<Database>, owner: { tenantId: string; userId: string }, keyId: string): Promise<ApiKey> {
  const revoked = await revokeApiKeyOfUser(db, owner.tenantId, owner.userId, keyId);
  if (revoked) return apiKeyRowToApiKey(revoked);
  const existing = await findApiKeyOfUser(db, owner.tenantId, owner.userId, keyId);
  if (!existing) throw notFound('The API key');
  return apiKeyRowToApiKey(existing);
}
