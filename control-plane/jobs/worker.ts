import { randomUUID } from 'node:crypto';
import { Logger as WorkerLogger, parseCronItems, run, type Runner } from 'graphile-worker';
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { maintenanceSchedule } from './maintenance.jobs.ts';
import { createTaskList } from './task-list.ts';

export interface WorkerHandle {
  workerId: string;
  /** Stops taking jobs, lets running ones finish (or releases them) and stops the heartbeat. */
  stop(): Promise<void>;
}

export interface StartWorkerOptions {
  ownerPool: pg.Pool;
  ownerDb: Kysely<Database>;
  log: Logger;
  concurrency: number;
  heartbeatMs?: number;
}

function workerLogger(log: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const child = log.child({ component: 'worker', ...(scope.taskIdentifier ? { task: scope.taskIdentifier } : {}), ...(scope.jobId ? { jobId: scope.jobId } : {}) });
    const method = level === 'error' ? 'error' : level === 'warning' ? 'warn' : level === 'debug' ? 'debug' : 'info';
    child[method](meta ?? {}, message);
  });
}

export async function startWorker(options: StartWorkerOptions): Promise<WorkerHandle> {
  const workerId = `worker-${randomUUID()}`;
  const { ownerDb, log } = options;
  const runner: Runner = await run({
    pgPool: options.ownerPool,
    concurrency: options.concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: createTaskList({ ownerDb, log }),
    parsedCronItems: parseCronItems(maintenanceSchedule),
    logger: workerLogger(log),
  });

  const beat = () =>
    sql`insert into worker_heartbeats (worker_id) values (${workerId})
        on conflict (worker_id) do update set last_seen_at = now()`.execute(ownerDb);
  await beat();
  const timer = setInterval(() => void beat().catch((error) => log.warn({ err: error }, 'worker heartbeat failed')), options.heartbeatMs ?? 10_000);
  timer.unref();
  log.info({ workerId, concurrency: options.concurrency }, 'worker started');

  return {
    workerId,
    async stop() {
      clearInterval(timer);
      await runner.stop();
      await ownerDb.deleteFrom('worker_heartbeats').where('worker_id', '=', workerId).execute().catch(() => {});
      log.info({ workerId }, 'worker stopped');
    },
  };
}
