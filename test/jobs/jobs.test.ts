import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../control-plane/config.ts';
import { createDatabase, type DatabaseHandle } from '../../control-plane/db/kysely-client.ts';
import { withTenant } from '../../control-plane/db/tenant-transaction.ts';
import { addJob } from '../../control-plane/jobs/add-job.ts';
import { startWorker, type WorkerHandle } from '../../control-plane/jobs/worker.ts';
import { createLogger } from '../../control-plane/logger.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

let owner: DatabaseHandle;
let app: DatabaseHandle;
let worker: WorkerHandle | undefined;
const log = createLogger('silent');
const anyTenant = '00000000-0000-4000-8000-000000000001';

beforeAll(async () => {
  const database = await createTestDatabase();
  owner = createDatabase(database.ownerUrl);
  app = createDatabase(database.appUrl);
});
afterAll(async () => {
  await worker?.stop();
  await app?.db.destroy();
  await owner?.db.destroy();
});

const queuedJobs = async () => Number((await sql<{ count: string }>`select count(*) from graphile_worker.jobs`.execute(owner.db)).rows[0]!.count);
const rateLimitRows = async () => (await sql<{ key: string }>`select key from rate_limits order by key`.execute(owner.db)).rows.map((r) => r.key);

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(100);
  }
}

describe('jobs', () => {
  // The worker's own jobs, enqueued by the owner (a request may enqueue only its tenant's execution
  // runs: test/db/enqueued-jobs-stay-within-the-tenant.test.ts); the transaction rule is the same.
  it('are enqueued only with the transaction: a rollback leaves no job', async () => {
    const rolledBack = owner.db.transaction().execute(async (trx) => {
      await addJob(trx, 'maintenance.purge_expired_rate_limits', {});
      expect(await queuedJobs()).toBe(0); // not visible outside the open transaction
      throw new Error('the request failed after enqueueing');
    });
    await expect(rolledBack).rejects.toThrow('the request failed');
    expect(await queuedJobs()).toBe(0);
  });

  it('run once committed, with their payload parsed at run time', async () => {
    await sql`insert into rate_limits (key, points, expire) values ('expired', 1, ${Date.now() - 1000}), ('live', 1, ${Date.now() + 60_000})`.execute(owner.db);
    await owner.db.transaction().execute((trx) => addJob(trx, 'maintenance.purge_expired_rate_limits', {}));
    expect(await queuedJobs()).toBe(1);
    worker = await startWorker({ ownerPool: owner.pool, ownerDb: owner.db, log, concurrency: 1, serverSecret: 'test-secret-0123456789-0123456789-abcdef', ai: loadConfig({}).ai });
    await waitFor(async () => (await queuedJobs()) === 0);
    expect(await rateLimitRows()).toEqual(['live']);
  });

  it('fail a job whose stored payload does not parse, without running its handler', async () => {
    await sql`insert into rate_limits (key, points, expire) values ('expired-2', 1, ${Date.now() - 1000})`.execute(owner.db);
    await sql`select graphile_worker.add_job('maintenance.purge_expired_rate_limits', '"not an object"'::json, max_attempts => 1)`.execute(owner.db);
    await waitFor(async () => {
      const { rows } = await sql<{ last_error: string | null }>`select last_error from graphile_worker.jobs`.execute(owner.db);
      return rows[0]?.last_error != null;
    });
    const { rows } = await sql<{ last_error: string }>`select last_error from graphile_worker.jobs`.execute(owner.db);
    expect(rows[0]!.last_error).toMatch(/Invalid payload for maintenance.purge_expired_rate_limits/);
    expect(await rateLimitRows()).toContain('expired-2');
  });

  it('refuse an unknown job or a bad payload at enqueue time', async () => {
    await expect(withTenant(app.db, anyTenant, (trx) => addJob(trx, 'no.such.job', {}))).rejects.toThrow('Unknown job "no.such.job"');
    await expect(withTenant(app.db, anyTenant, (trx) => addJob(trx, 'maintenance.purge_expired_rate_limits', 'text'))).rejects.toThrow();
  });

  it('report a heartbeat while running and remove it on stop', async () => {
    const beats = async () => Number((await sql<{ count: string }>`select count(*) from worker_heartbeats`.execute(owner.db)).rows[0]!.count);
    expect(await beats()).toBe(1);
    await worker!.stop();
    worker = undefined;
    expect(await beats()).toBe(0);
  });
});
