import pg from 'pg';
import { countRows } from './owner-sql.ts';
import { until } from './until.ts';

/** A table locked by the test: statements that touch it wait until it is released. */
export interface TableLockGate {
  /** Waits until `sessions` (one unless told) wait on the lock: the statements they sent are held here. */
  untilWaitedOn(what: string, timeoutMs?: number, sessions?: number): Promise<void>;
  /**
   * Ends the sessions waiting on the lock, as a lost connection or a failover ends them: whatever
   * they sent is rolled back and cannot land once the lock is released.
   */
  endWaiters(): Promise<void>;
  /** Lets whatever waits go on (harmless twice). */
  release(): Promise<void>;
}

/**
 * Locks `table` (ACCESS EXCLUSIVE, as the owner) until `release()`: what touches it waits for as
 * long as the test needs, whatever the machine's load. A run that has finished keeps its execution
 * "running", its outcome waiting to be stored under that lock — where a kit kept busy for a while
 * raced the test's polls, the heartbeat windows and the kit's own time limit.
 */
export async function lockTableUntilReleased(ownerUrl: string, table: string): Promise<TableLockGate> {
  const holder = new pg.Client({ connectionString: ownerUrl });
  await holder.connect();
  await holder.query('begin');
  // `table` may name its schema (graphile_worker._private_tasks).
  await holder.query(`lock table ${table.split('.').map(pg.escapeIdentifier).join('.')} in access exclusive mode`);
  const holderPid: number = (await holder.query('select pg_backend_pid() as pid')).rows[0].pid;
  const waiters = 'pg_stat_activity where $1 = any(pg_blocking_pids(pid))';
  let released: Promise<void> | undefined;
  return {
    untilWaitedOn: (what, timeoutMs = 30_000, sessions = 1) => until(what, async () => (await countRows(ownerUrl, waiters, [holderPid])) >= sessions, timeoutMs),
    async endWaiters() {
      // With a timeout, pg_terminate_backend returns once the session is gone (or says it is not).
      const ended = await holder.query<{ gone: boolean }>(`select pg_terminate_backend(pid, 10000) as gone from ${waiters}`, [holderPid]);
      if (ended.rows.some((row) => !row.gone)) throw new Error(`a session waiting on the ${table} lock did not end`);
    },
    release: () =>
      (released ??= (async () => {
        await holder.query('rollback').catch(() => {});
        await holder.end();
      })()),
  };
}
