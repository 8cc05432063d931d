import { sql, type Kysely } from 'kysely';
import pRetry from 'p-retry';
import type { Database } from './database.ts';
import { isTransactionConflict } from './postgres-errors.ts';
import { sentAhead, sentBehind } from './prepared-statements.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Points row-level security at `tenantId` for the rest of the transaction (SET LOCAL semantics). */
export async function setTransactionTenant(trx: Kysely<Database>, tenantId: string): Promise<void> {
  await sql`select set_config('app.tenant_id', ${tenantId}, true)`.execute(trx);
}

/**
 * Runs `work` with row-level security pointed at `tenantId`, then back at `restoreTo` (a platform
 * admin's request acting on another tenant). No `finally`: an error rolls the transaction back.
 */
export async function asTenant<T>(trx: Kysely<Database>, tenantId: string, restoreTo: string, work: () => Promise<T>): Promise<T> {
  await setTransactionTenant(trx, tenantId);
  const outcome = await work();
  await setTransactionTenant(trx, restoreTo);
  return outcome;
}

/**
 * Runs a request's transaction again when PostgreSQL rolled it back to settle a conflict with a
 * concurrent one (a deadlock, a serialization failure): nothing of it was kept, and the same work
 * usually passes once the other transaction is through. Three attempts in all, a short random pause
 * between them; a conflict that outlasts them reaches the caller as SERVICE_UNAVAILABLE. `work` must
 * keep its effects in the transaction (request work does; jobs add theirs through it).
 */
function retryingConflicts<T>(attempt: () => Promise<T>): Promise<T> {
  return pRetry(attempt, { retries: 2, minTimeout: 10, maxTimeout: 100, randomize: true, shouldRetry: ({ error }) => isTransactionConflict(error) });
}

/**
 * Runs `work` in one transaction whose every statement is confined to `tenantId` by PostgreSQL: a
 * request transaction that may write (see inTenantTransaction), for work outside a procedure.
 */
export function withTenant<T>(db: Kysely<Database>, tenantId: string, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return inTenantTransaction(db, tenantId, { readOnly: false }, work);
}

/**
 * BEGIN and the tenant as one simple-protocol statement pair, so the id is inlined — which is why it
 * must be a uuid, checked here, never free text.
 */
export function beginForTenantText(tenantId: string, readOnly: boolean): string {
  if (!UUID.test(tenantId)) throw new Error('A tenant id must be a uuid');
  return `begin${readOnly ? ' isolation level repeatable read, read only' : ''}; select set_config('app.tenant_id', '${tenantId}', true)`;
}

/** BEGIN with the tenant, sent ahead: on the service's pool it travels with the transaction's first statement, in the same round trip. */
function beginForTenant(tenantId: string, readOnly: boolean) {
  return sql.raw(sentAhead(beginForTenantText(tenantId, readOnly)));
}

/**
 * The request transaction: `work` runs on one connection inside BEGIN … COMMIT with the tenant
 * set; an error rolls everything back (jobs added through the connection included).
 *
 * Read-only work (`readOnly`) reads one snapshot (REPEATABLE READ), so a page and its `total`,
 * read by two statements, agree with each other while other requests write. It cannot write, so
 * its outcome is final once `work` returns: the caller gets it at once, and the COMMIT is sent
 * behind (prepared-statements.ts): the connection goes back to the pool at once, and the COMMIT
 * travels with the next transaction's first write on it.
 *
 * A transaction PostgreSQL rolls back for a conflict with a concurrent one runs again (see
 * retryingConflicts), `work` included.
 */
export function inTenantTransaction<T>(db: Kysely<Database>, tenantId: string, options: { readOnly: boolean }, work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  return retryingConflicts(() => runInTenantTransaction(db, tenantId, options, work));
}

function runInTenantTransaction<T>(db: Kysely<Database>, tenantId: string, options: { readOnly: boolean }, work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    db.connection()
      .execute(async (connection) => {
        await beginForTenant(tenantId, options.readOnly).execute(connection);
        let outcome: T;
        try {
          outcome = await work(connection);
        } catch (error) {
          await sql`rollback`.execute(connection);
          reject(error);
          return;
        }
        if (options.readOnly) {
          // Final already: the caller has it before the COMMIT, which goes out behind.
          resolve(outcome);
          await sql.raw(sentBehind('commit')).execute(connection);
          return;
        }
        await sql`commit`.execute(connection);
        resolve(outcome);
      })
      .catch(reject);
  });
}
