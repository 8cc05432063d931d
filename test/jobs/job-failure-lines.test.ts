import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { quickAddJob } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    // A payload the task refuses: every attempt fails.
    const job = await quickAddJob({ connectionString: app.database.ownerUrl }, 'kits.execute', { executionId: 'not-a-uuid', tenantId }, { maxAttempts: 2 });
    const lines = await failedLinesOf(String(job.id), 2);
    expect(lines.map((line) => [line.level, line.attempt, line.maxAttempts])).toEqual([
      [40, 1, 2],
      [50, 2, 2],
    ]);
    for (const line of lines) {
      expect(String(line.jobId)).toBe(String(job.id));
      expect(line).toMatchObject({ task: 'kits.execute', executionId: 'not-a-uuid', tenantId, err: { message: expect.stringMatching(/^Invalid payload for kits.execute: .*executionId/s) } });
      expect(String((line.err as { stack?: string }).stack)).toContain('task-list.ts');
      // The job row (payload, last error, lock) is not written, and the stack only once, in `err`.
      expect(line).not.toHaveProperty('job');
      expect(String(line.msg)).not.toContain('\n');
    }
    // Said once per attempt, in those lines: the task does not log it a second time.
    expect(app.logLines.filter((line) => String(line.msg).includes('invalid payload'))).toEqual([]);
  }, 30_000);
});
