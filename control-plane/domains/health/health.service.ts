import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { HealthReport } from './health.schema.ts';
import { latestWorkerHeartbeat, pingDatabase } from './health.repository.ts';

/** A worker that has not beaten for this long is reported down (it beats every 10 s). */
const WORKER_STALE_AFTER_MS = 30_000;

export async function checkHealth(db: Kysely<Database>, version: string): Promise<HealthReport> {
  const started = performance.now();
  let databaseUp = true;
  let lastBeat: Date | undefined;
  try {
    await pingDatabase(db);
    lastBeat = await latestWorkerHeartbeat(db);
  } catch {
    databaseUp = false;
  }
  const latencyMs = Math.round((performance.now() - started) * 100) / 100;
  const workerUp = lastBeat !== undefined && Date.now() - lastBeat.getTime() < WORKER_STALE_AFTER_MS;
  return {
    status: databaseUp && workerUp ? 'ok' : 'degraded',
    database: { status: databaseUp ? 'up' : 'down', latencyMs },
    worker: { status: workerUp ? 'up' : 'down', lastHeartbeatAt: lastBeat?.toISOString() ?? null },
    version,
  };
}
