import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { countRows } from './owner-sql.ts';

/** How many sessions of the database wait on a lock now. */
export async function lockWaiterCount(ownerUrl: string): Promise<number> {
  return countRows(ownerUrl, "pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
}

/** Waits until at least `count` sessions of the database wait on a lock (up to 10 s). */
export async function untilLockWaiters(ownerUrl: string, count = 1): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await lockWaiterCount(ownerUrl)) < count && Date.now() < deadline) await sleep(20);
}

/**
 * Makes a race deterministic: opens a transaction as the owner and runs `hold` in it (taking the
 * locks another request will need), starts `race`, waits until it is blocked on those locks, then
 * commits and returns what `race` resolved to.
 */
export async function whileTransactionHolds<T>(ownerUrl: string, hold: (client: pg.Client) => Promise<unknown>, race: () => Promise<T>): Promise<T> {
  const holder = new pg.Client({ connectionString: ownerUrl });
  await holder.connect();
  try {
    await holder.query('begin');
    await hold(holder);
    const racing = race();
    await untilLockWaiters(ownerUrl);
    await holder.query('commit');
    return await racing;
  } finally {
    await holder.end();
  }
}

/**
 * Locks `table` (ACCESS EXCLUSIVE, as the owner) until the returned function is called: every
 * statement that touches it waits meanwhile, as behind a long migration.
 */
export async function holdTableLock(ownerUrl: string, table: string): Promise<() => Promise<void>> {
  const holder = new pg.Client({ connectionString: ownerUrl });
  await holder.connect();
  await holder.query('begin');
  await holder.query(`lock table ${pg.escapeIdentifier(table)} in access exclusive mode`);
  return async () => {
    await holder.query('rollback').catch(() => {});
    await holder.end();
  };
}
