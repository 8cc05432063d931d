import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { findJobDefinition } from './task-list.ts';

/** graphile-worker keeps a job's priority as a smallint: a higher one is stored as this. */
const MAX_JOB_PRIORITY = 32_767;

export interface AddJobOptions {
  /** Deduplicates: a second add with the same key replaces the pending job instead of doubling it. */
  jobKey?: string;
  maxAttempts?: number;
  runAt?: Date;
  /** graphile-worker runs the lowest first (default 0); at most 32,767. */
  priority?: number;
}

/**
 * Enqueues a job on the caller's connection. Pass the request's transaction so the job exists
 * only if the rows that need it commit: a rolled-back transaction leaves no job behind.
 */
export async function addJob(db: Kysely<Database>, name: string, payload: unknown, options: AddJobOptions = {}): Promise<string> {
  const definition = findJobDefinition(name);
  if (!definition) throw new Error(`Unknown job "${name}"`);
  const parsed = definition.payload.parse(payload);
  const { rows } = await sql<{ id: string }>`
    select app_private.enqueue_job(${name}, ${JSON.stringify(parsed)}::json, ${options.jobKey ?? null},
                                   ${options.maxAttempts ?? null}::int, ${options.runAt ?? null}::timestamptz,
                                   ${options.priority === undefined ? null : Math.min(options.priority, MAX_JOB_PRIORITY)}::int) as id
  `.execute(db);
  return String(rows[0]?.id);
}
