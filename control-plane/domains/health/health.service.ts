import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { HealthReport } from './health.schema.ts';
import { HEALTH_DATABASE_WAIT_MS, withinHealthWait } from './health-wait.ts';
import { latestWorkerHeartbeat, pingDatabase } from './health.repository.ts';

/** A worker whose heartbeat is older than `workerStaleAfterMs` (WORKER_STALE_AFTER_MS) is down. */
export async function checkHealth(db: Kysely<Database>, version: string, workerStaleAfterMs: number, databaseWaitMs = HEALTH_DATABASE_WAIT_MS): Promise<HealthReport> {
  const started = performance.now();
  let databaseUp = true;
  let lastBeat: Date | undefined;
  try {
    lastBeat = await withinHealthWait(
      (async () => {
        await pingDatabase(db);
        return latestWorkerHeartbeat(db);
      })(),
      databaseWaitMs,
    );
  } catch {
    databaseUp = false;
  }
  const latencyMs = Math.round((performance.now() - started) * 100) / 100;
  const workerUp = lastBeat !== undefined && Date.now() - lastBeat.getTime() < workerStaleAfterMs;
  return {
    status: databaseUp && workerUp ? 'ok' : 'degraded',
    database: { status: databaseUp ? 'up' : 'down', latencyMs },
    worker: { status: workerUp ? 'up' : 'down', lastHeartbeatAt: lastBeat?.toISOString() ?? null },
    version,
  };
}
