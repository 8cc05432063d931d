import type { CronItem } from 'graphile-worker';
import { sql } from 'kysely';
import { z } from 'zod';
import { failStrandedAgentExecutionsJob } from '../domains/agents/fail-stranded-agent-executions.job.ts';
import { failStrandedSpecificationsJob } from '../domains/specifications/fail-stranded-specifications.job.ts';
import { defineJob } from './job-definition.ts';

export const purgeExpiredRateLimits = defineJob({
  name: 'maintenance.purge_expired_rate_limits',
  payload: z.object({}).passthrough(),
  async run(_payload, { ownerDb }) {
    await sql`delete from rate_limits where expire is not null and expire < ${Date.now()}`.execute(ownerDb);
  },
});

export const pruneWorkerHeartbeats = defineJob({
  name: 'maintenance.prune_worker_heartbeats',
  payload: z.object({}).passthrough(),
  async run(_payload, { ownerDb }) {
    await ownerDb.deleteFrom('worker_heartbeats').where('last_seen_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
  },
});

/** Periodic clean-ups; graphile-worker runs each once per matching minute across all workers. */
export const maintenanceSchedule: CronItem[] = [
  { task: purgeExpiredRateLimits.name, match: '*/10 * * * *', options: { maxAttempts: 1, backfillPeriod: 0 } },
  { task: pruneWorkerHeartbeats.name, match: '17 * * * *', options: { maxAttempts: 1, backfillPeriod: 0 } },
  { task: failStrandedSpecificationsJob.name, match: '*/5 * * * *', options: { maxAttempts: 1, backfillPeriod: 0 } },
  { task: failStrandedAgentExecutionsJob.name, match: '*/5 * * * *', options: { maxAttempts: 1, backfillPeriod: 0 } },
];
