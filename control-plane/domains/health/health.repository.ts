import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';

export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

export async function latestWorkerHeartbeat(db: Kysely<Database>): Promise<Date | undefined> {
  const row = await db.selectFrom('worker_heartbeats').select((eb) => eb.fn.max('last_seen_at').as('last')).executeTakeFirst();
  return row?.last ? new Date(row.last) : undefined;
}
