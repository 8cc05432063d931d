import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.ts';

export type Tx = Transaction<Database>;

/** Points row-level security at `tenantId` for the rest of the transaction (SET LOCAL semantics). */
export async function setTransactionTenant(trx: Kysely<Database>, tenantId: string): Promise<void> {
  await sql`select set_config('app.tenant_id', ${tenantId}, true)`.execute(trx);
}

/** Runs `work` in one transaction whose every statement is confined to `tenantId` by PostgreSQL. */
export function withTenant<T>(db: Kysely<Database>, tenantId: string, work: (trx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await setTransactionTenant(trx, tenantId);
    return work(trx);
  });
}
