import type { Kysely } from 'kysely';
import { databaseNow } from '../../db/database-clock.ts';
import type { ApiKeyRow, Database } from '../../db/database.ts';
import { pagedRows } from '../../db/paged-rows.ts';
import type { Paging } from '../../http/paging.ts';

export async function insertApiKey(
  db: Kysely<Database>,
  values: { tenantId: string; userId: string; name: string; prefix: string; keyHash: string; issuedByPlatform: boolean },
): Promise<ApiKeyRow> {
  return db
    .insertInto('api_keys')
    .values({ tenant_id: values.tenantId, user_id: values.userId, name: values.name, prefix: values.prefix, key_hash: values.keyHash, issued_by_platform: values.issuedByPlatform })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The user's keys not revoked, counted while their user row is locked for the rest of the
 * transaction, so two creations at once cannot both count one below the cap. FOR NO KEY UPDATE
 * serialises them as FOR UPDATE would, without making inserts of rows that reference the user (a
 * membership, an invitation they send) wait for this transaction: their foreign key checks take
 * FOR KEY SHARE on the user row, which FOR UPDATE blocks and FOR NO KEY UPDATE does not.
 */
export async function countActiveApiKeysOfUserLocked(db: Kysely<Database>, tenantId: string, userId: string): Promise<number> {
  await db.selectFrom('users').select('id').where('tenant_id', '=', tenantId).where('id', '=', userId).forNoKeyUpdate().execute();
  const { count } = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(count);
}

export async function listApiKeysOfUser(db: Kysely<Database>, tenantId: string, userId: string, filter: Paging & { status?: 'active' | 'revoked' | undefined }) {
  let query = db.selectFrom('api_keys').where('tenant_id', '=', tenantId).where('user_id', '=', userId);
  if (filter.status) query = query.where('revoked_at', filter.status === 'active' ? 'is' : 'is not', null);
  return pagedRows(query.selectAll().orderBy('created_at').orderBy('id'), query, filter);
}

export async function revokeApiKeyOfUser(db: Kysely<Database>, tenantId: string, userId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set({ revoked_at: databaseNow })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Every key the user ever held, revoked ones included, locked for the rest of the transaction: a
 * use being noted meanwhile (app_private.authenticate_api_key updates last_used_at) is waited for
 * and then seen, and none is noted until the transaction ends.
 */
export async function lockApiKeysOfUser(db: Kysely<Database>, tenantId: string, userId: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'last_used_at', 'revoked_at', 'issued_by_platform'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .forNoKeyUpdate()
    .execute();
}

/** Revokes every key of the user that is not revoked yet; returns their ids. */
export async function revokeActiveApiKeysOfUser(db: Kysely<Database>, tenantId: string, userId: string): Promise<string[]> {
  const rows = await db
    .updateTable('api_keys')
    .set({ revoked_at: databaseNow })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

export async function findApiKeyOfUser(db: Kysely<Database>, tenantId: string, userId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('id', '=', keyId)
    .executeTakeFirst();
}
