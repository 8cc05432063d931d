import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../db/database.ts';

/** Records that this worker is alive and, once its pool has started, which pool locks its jobs. */
export async function recordHeartbeat(db: Kysely<Database>, workerId: string, jobPoolId: string | null): Promise<void> {
  // coalesce: a beat sent before the pool started must not erase the id a later one recorded.
  await db
    .insertInto('worker_heartbeats')
    .values({ worker_id: workerId, job_pool_id: jobPoolId })
    .onConflict((conflict) =>
      conflict.column('worker_id').doUpdateSet((eb) => ({ last_seen_at: sql<Date>`now()`, job_pool_id: eb.fn.coalesce('excluded.job_pool_id', 'worker_heartbeats.job_pool_id') })),
    )
    .execute();
}

/** `worker_heartbeats.last_seen_at`, bare or qualified by the alias the query gives the table. */
type LastSeenAtColumn = 'last_seen_at' | `${string}.last_seen_at`;

/**
 * The one rule for a dead worker: its heartbeat is stale once its last beat is `staleAfterMs` old
 * or older (exactly `staleAfterMs` counts as stale), by the database's clock, which every worker's
 * beats were stamped with — the app's clock may drift from it.
 */
export function heartbeatIsStale(lastSeenAt: LastSeenAtColumn, staleAfterMs: number): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(lastSeenAt)} <= now() - make_interval(secs => ${staleAfterMs / 1000})`;
}

/** The negation of `heartbeatIsStale` (exact: `last_seen_at` is never null): beaten less than `staleAfterMs` ago. */
export function heartbeatIsFresh(lastSeenAt: LastSeenAtColumn, staleAfterMs: number): RawBuilder<boolean> {
  return sql<boolean>`not (${heartbeatIsStale(lastSeenAt, staleAfterMs)})`;
}

export async function removeHeartbeat(db: Kysely<Database>, workerId: string): Promise<void> {
  await db.deleteFrom('worker_heartbeats').where('worker_id', '=', workerId).execute();
}

/**
 * The job pools of workers whose heartbeat went stale, each handed out once: the id is cleared so
 * the next reaper does not release the same pool again (a worker that was only paused records it
 * again with its next beat). Call inside the transaction that releases the pools' jobs.
 */
export async function takeJobPoolsOfDeadWorkers(db: Kysely<Database>, staleAfterMs: number): Promise<string[]> {
  const { rows } = await sql<{ job_pool_id: string }>`
    with dead as (
      select worker_id, job_pool_id from worker_heartbeats
      where job_pool_id is not null and ${heartbeatIsStale('last_seen_at', staleAfterMs)}
      for update skip locked
    )
    update worker_heartbeats as h set job_pool_id = null
    from dead
    where h.worker_id = dead.worker_id
    returning dead.job_pool_id
  `.execute(db);
  return rows.map((row) => row.job_pool_id);
}

/**
 * Unlocks every job (and named queue) the given pools hold, with graphile-worker's own function, so
 * any worker takes them at its next poll instead of after graphile-worker's 4-hour lock timeout.
 * Only for pools whose process is gone: a live one would find its running job taken by another.
 */
export async function forceUnlockJobPools(db: Kysely<Database>, jobPoolIds: string[]): Promise<void> {
  if (jobPoolIds.length === 0) return;
  await sql`select graphile_worker.force_unlock_workers(${jobPoolIds}::text[])`.execute(db);
}
