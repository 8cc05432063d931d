import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { quickAddJob } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * What the on-call engineer reads when a job fails: graphile-worker's own "Failed task" line is
 * written from the worker's scope, which names no job, so its fields must come from the job.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_CONCURRENCY: '1' } });
});
afterAll(() => app?.stop());

async function failedLinesOf(jobId: string, count: number) {
  const deadline = Date.now() + 15_000;
  const lines = () => app.logLines.filter((line) => line.component === 'worker' && String(line.msg).startsWith(`Failed task ${jobId} `));
  while (lines().length < count && Date.now() < deadline) await sleep(100);
  return lines();
}

describe('a job that fails', () => {
  it('is logged with its job id, task, attempt, execution and tenant, a warning while it will be retried and an error at its last attempt', async () => {
    const tenantId = randomUUID();
    const executionId = randomUUID();
    // The database refuses to claim the execution as a passing conflict would: every attempt fails,
    // and each may be tried again. (A payload the task refuses fails at once, for good.)
    await ownerQuery(app.database.ownerUrl, `
      create function test_claim_conflict() returns trigger language plpgsql as $$ begin raise exception 'claim conflict' using errcode = '40001'; end $$;
      create trigger test_claim_conflict before update on kit_executions for each statement execute function test_claim_conflict();
    `);
    const job = await quickAddJob({ connectionString: app.database.ownerUrl }, 'kits.execute', { executionId, tenantId }, { maxAttempts: 2 });
    const lines = await failedLinesOf(String(job.id), 2).finally(() =>
      ownerQuery(app.database.ownerUrl, 'drop trigger test_claim_conflict on kit_executions; drop function test_claim_conflict()'),
    );
    expect(lines.map((line) => [line.level, line.attempt, line.maxAttempts])).toEqual([
      [40, 1, 2],
      [50, 2, 2],
    ]);
    for (const line of lines) {
      expect(String(line.jobId)).toBe(String(job.id));
      expect(line).toMatchObject({ task: 'kits.execute', executionId, tenantId, err: { message: 'claim conflict', code: '40001' } });
      expect(String((line.err as { stack?: string }).stack)).toContain('claim conflict');
      // The job row (payload, last error, lock) is not written, and the stack only once, in `err`.
      expect(line).not.toHaveProperty('job');
      expect(String(line.msg)).not.toContain('\n');
    }
    // Said once per attempt, in those lines: the task does not log it a second time.
    expect(app.logLines.filter((line) => line.level === 50 && !String(line.msg).startsWith('Failed task '))).toEqual([]);
  }, 30_000);
});
