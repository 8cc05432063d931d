import { Logger as WorkerLogger, type LogLevel } from 'graphile-worker';
import { isDatabaseUnavailable } from '../db/postgres-errors.ts';
import type { Logger } from '../logger.ts';

/** The job row graphile-worker hands its own lines ("Failed task …", "Completed task …") as `meta.job`. */
interface LoggedJob {
  id?: unknown;
  task_identifier?: unknown;
  attempts?: unknown;
  max_attempts?: unknown;
  payload?: unknown;
}

/**
 * graphile-worker's log lines on the service's logger. Its errors carry the failure as
 * `meta.error`, which pino would write as `{}` (an Error's fields are not enumerable): it is
 * passed as `err`, which pino serialises with its message and stack. A database that is away (a
 * restart, a failover) is something the worker waits out, not a fault of the service: its errors
 * are warnings, so a planned restart writes no level-50 line.
 *
 * A job's outcome lines ("Failed task …", "Completed task …") come from the worker's scope, which
 * names no job: the job they carry gives the fields one run is followed by (`jobId`, `task`,
 * `attempt` of `maxAttempts`, and the `executionId` and `tenantId` its payload names), and the job
 * row itself (payload, last error, lock) is not written. A failed attempt that will be tried again
 * is a warning; the last attempt's failure is the error, so one failing job is one level-50 line.
 */
export function workerLogger(log: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const { error, job, failure: _failure, success: _success, ...rest } = (meta ?? {}) as { error?: unknown; job?: LoggedJob; failure?: unknown; success?: unknown };
    const fields = { component: 'worker', ...jobFields(scope, job), ...rest, ...(error === undefined ? {} : { err: error }) };
    // The message repeats the error's stack, which `err` carries: its first line says what happened.
    const text = error === undefined ? message : message.split('\n')[0]!.replace(/:$/, '');
    log[levelOf(level, error, job)](fields, text);
  });
}

function levelOf(level: LogLevel, error: unknown, job: LoggedJob | undefined): 'error' | 'warn' | 'info' | 'debug' {
  if (level === 'error') {
    if (isDatabaseUnavailable(error)) return 'warn';
    const attemptsLeft = typeof job?.attempts === 'number' && typeof job.max_attempts === 'number' && job.attempts < job.max_attempts;
    return attemptsLeft ? 'warn' : 'error';
  }
  return level === 'warning' ? 'warn' : level === 'debug' ? 'debug' : 'info';
}

/** The fields one run of a job is followed by, in graphile-worker's lines and its handler's alike (task-list.ts). */
export function jobFields(scope: { taskIdentifier?: string; jobId?: string; workerId?: string }, job: LoggedJob | undefined): Record<string, unknown> {
  const payload = (job?.payload ?? {}) as Record<string, unknown>;
  const fields: Record<string, unknown> = {
    task: job?.task_identifier ?? scope.taskIdentifier,
    jobId: job?.id ?? scope.jobId,
    attempt: job?.attempts,
    maxAttempts: job?.max_attempts,
    executionId: typeof payload.executionId === 'string' ? payload.executionId : undefined,
    specificationId: typeof payload.specificationId === 'string' ? payload.specificationId : undefined,
    tenantId: typeof payload.tenantId === 'string' ? payload.tenantId : undefined,
    workerId: scope.workerId,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
