import type { Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // graphile-worker locks a process's jobs under its worker pool's id, not under the heartbeat's
  // worker_id: kept beside the heartbeat so the jobs of a worker that died holding them can be
  // released. Null once they have been (and before the pool has started).
  await db.schema.alterTable('worker_heartbeats').addColumn('job_pool_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('worker_heartbeats').dropColumn('job_pool_id').execute();
}
