import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A job whose payload does not parse (added by hand, or by an older version) fails the same way
 * on every attempt: graphile-worker's default of 25 attempts would retry it for about three days,
 * a warning each time. It fails once, as its last attempt, with the reason kept on the job row.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_CONCURRENCY: '1' } });
});
afterAll(() => app?.stop());

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

async function afterFirstAttempt(jobId: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const [job] = await sqlAsOwner('select attempts, max_attempts, locked_at, last_error from graphile_worker.jobs where id = $1', [jobId]);
    if (job && job.attempts >= 1 && job.locked_at === null && job.last_error !== null) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} never failed`);
    await sleep(100);
  }
}

describe('a job added by hand with a payload its task does not take', () => {
  it.each([
    ['kits.execute', { executionId: 'not-a-uuid', tenantId: randomUUID() }, /^Invalid payload for kits.execute: .*executionId/s],
    ['kits.bundle_execution', { executionId: randomUUID(), tenantId: randomUUID() }, /^Invalid payload for kits.bundle_execution: .*kitRef/s],
    ['credentials.rotate_keys', {}, /^Invalid payload for credentials.rotate_keys: .*requestedBy/s],
  ])('%s fails at its first attempt, for good, with one error line saying why', async (task, payload, reason) => {
    // graphile-worker's own default: 25 attempts.
    const [{ id }] = await sqlAsOwner('select (graphile_worker.add_job($1, $2::json)).id::text as id', [task, JSON.stringify(payload)]);
    const job = await afterFirstAttempt(id);
    expect(job).toMatchObject({ attempts: 1, max_attempts: 1, last_error: expect.stringMatching(reason) });

    const lines = app.logLines.filter((line) => line.component === 'worker' && String(line.msg).startsWith(`Failed task ${id} `));
    expect(lines.map((line) => [line.level, line.attempt, line.maxAttempts])).toEqual([[50, 1, 1]]);
    // Nothing is tried again: no second attempt, however long one waits.
    await sleep(3_000);
    const [again] = await sqlAsOwner('select attempts from graphile_worker.jobs where id = $1', [id]);
    expect(again.attempts).toBe(1);
  }, 30_000);
});
