import { Logger as WorkerLogger } from 'graphile-worker';
import { isDatabaseUnavailable } from '../db/postgres-errors.ts';
import type { Logger } from '../logger.ts';

/**
 * graphile-worker's log lines on the service's logger. Its errors carry the failure as
 * `meta.error`, which pino would write as `{}` (an Error's fields are not enumerable): it is
 * passed as `err`, which pino serialises with its message and stack. A database that is away (a
 * restart, a failover) is something the worker waits out, not a fault of the service: its errors
 * are warnings, so a planned restart writes no level-50 line.
 */
export function workerLogger(log: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const child = log.child({ component: 'worker', ...(scope.taskIdentifier ? { task: scope.taskIdentifier } : {}), ...(scope.jobId ? { jobId: scope.jobId } : {}) });
    const { error, ...rest } = (meta ?? {}) as { error?: unknown };
    const fields = error === undefined ? rest : { ...rest, err: error };
    const method = level === 'error' ? (isDatabaseUnavailable(error) ? 'warn' : 'error') : level === 'warning' ? 'warn' : level === 'debug' ? 'debug' : 'info';
    child[method](fields, message);
  });
}
