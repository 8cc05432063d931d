import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { HealthReport } from './health.schema.ts';
import { HEALTH_DATABASE_WAIT_MS, withinHealthWait } from './health-wait.ts';
import { latestWorkerHeartbeat, pingDatabase } from './health.repository.ts';

/** A worker whose heartbeat is `workerStaleAfterMs` (WORKER_STALE_AFTER_MS) old or older, by the database's clock, is down. */
export async function checkHealth(db: Kysely<Database>, version: string, workerStaleAfterMs: number, databaseWaitMs = HEALTH_DATABASE_WAIT_MS): Promise<HealthReport> {
  const started = performance.now();
  let databaseUp = true;
  let heartbeat: { last: Date | undefined; fresh: boolean } = { last: undefined, fresh: false };
  try {
    heartbeat = await withinHealthWait(
      (async () => {
        await pingDatabase(db);
        return latestWorkerHeartbeat(db, workerStaleAfterMs);
      })(),
      databaseWaitMs,
    );
  } catch {
    databaseUp = false;
  }
  const latencyMs = Math.round((performance.now() - started) * 100) / 100;
  const lastBeat = heartbeat.last;
  const workerUp = heartbeat.fresh;
  return {
    status: databaseUp && workerUp ? 'ok' : 'degraded',
    database: { status: databaseUp ? 'up' : 'down', latencyMs },
    worker: { status: workerUp ? 'up' : 'down', lastHeartbeatAt: lastBeat?.toISOString() ?? null },
    version,
  };
}
