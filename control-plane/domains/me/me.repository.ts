import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';

export async function findUserById(db: Kysely<Database>, tenantId: string, userId: string) {
  return db.selectFrom('users').select(['id', 'email', 'name']).where('tenant_id', '=', tenantId).where('id', '=', userId).executeTakeFirst();
}
