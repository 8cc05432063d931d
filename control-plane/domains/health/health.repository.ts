import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { heartbeatIsFresh } from '../../jobs/worker-heartbeat.repository.ts';

export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

/**
 * The latest worker heartbeat, and whether any is fresh: judged by the database's clock, which
 * stamped the beats (an API node's own clock may be off by any amount).
 */
export async function latestWorkerHeartbeat(db: Kysely<Database>, staleAfterMs: number): Promise<{ last: Date | undefined; fresh: boolean }> {
  const row = await db
    .selectFrom('worker_heartbeats')
    .select((eb) => [eb.fn.max('last_seen_at').as('last'), sql<boolean | null>`bool_or(${heartbeatIsFresh('last_seen_at', staleAfterMs)})`.as('fresh')])
    .executeTakeFirst();
  return { last: row?.last ? new Date(row.last) : undefined, fresh: row?.fresh === true };
}
