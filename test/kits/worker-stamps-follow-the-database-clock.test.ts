import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { publishDeployerWithCredential, waitForExecution } from '../helpers/kit-fixtures.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { millisecondsBetween, withProcessClockAnHourAhead } from '../helpers/process-clock-ahead.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A worker (and API node) whose clock runs an hour ahead of the database's stamps what it records
 * with the database's time, as the rows' `created_at` and `started_at` are: an execution does not
 * end an hour after it started, nor a credential get checked or a key retired "in the future".
 */
let app: TestApp;
let key: string;
let orgId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const A_MINUTE_MS = 60_000;

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

/** Milliseconds from `from` to `to`, two timestamptz expressions over `tables`, as PostgreSQL reckons them. */
const gapMs = async (from: string, to: string, tables: string, values: unknown[]) =>
  (await sqlAsOwner(`select round(extract(epoch from ${to} - ${from}) * 1000)::int as ms from ${tables}`, values)).map((row) => row.ms as number);

describe('with the worker process clock an hour ahead of the database', () => {
  let deployer: Awaited<ReturnType<typeof publishDeployerWithCredential>>;

  it('publishing a kit stamps its updated_at by the database clock', async () => {
    deployer = await withProcessClockAnHourAhead(() => publishDeployerWithCredential(app.url, key, orgId, 'skewed-deploy-token'));
    const [ms] = await gapMs('created_at', 'updated_at', 'kits where organization_id = $1 and kit_id = $2', [orgId, 'deployer']);
    expect(ms).toBeGreaterThanOrEqual(0);
    expect(ms).toBeLessThan(A_MINUTE_MS);
  });

  it('an execution ends with completed_at within a minute of its started_at, not an hour later', async () => {
    const done = await withProcessClockAnHourAhead(async () => waitForExecution(app.url, key, orgId, await deployer.execute()));
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(millisecondsBetween(done.startedAt, done.completedAt)).toBeGreaterThanOrEqual(0);
    expect(millisecondsBetween(done.startedAt, done.completedAt)).toBeLessThan(A_MINUTE_MS);
    const [ms] = await gapMs('started_at', 'completed_at', 'kit_executions where id = $1', [done.id]);
    expect(ms).toBeGreaterThanOrEqual(0);
    expect(ms).toBeLessThan(A_MINUTE_MS);
  });

  it('the credential the run opened shows lastCheckedAt within a minute of its createdAt', async () => {
    const listed = await call(app.url, `/api/${orgId}/kits/credentials?projectId=${deployer.projectId}`, { apiKey: key });
    expect(listed.status, listed.text).toBe(200);
    const credential = listed.body.data.credentials.find((row: { id: string }) => row.id === deployer.credentialId);
    expect(credential).toMatchObject({ lastCheckStatus: 'succeeded', lastCheckedAt: expect.any(String) });
    expect(millisecondsBetween(credential.createdAt, credential.lastCheckedAt)).toBeGreaterThanOrEqual(0);
    expect(millisecondsBetween(credential.createdAt, credential.lastCheckedAt)).toBeLessThan(A_MINUTE_MS);
  });

  it('deprecating a kit stamps its updated_at by the database clock', async () => {
    await withProcessClockAnHourAhead(async () => {
      const deprecated = await call(app.url, `/api/${orgId}/kits/deployer`, { method: 'PATCH', apiKey: key, body: { status: 'deprecated' } });
      expect(deprecated.status, deprecated.text).toBe(200);
    });
    const [ms] = await gapMs('created_at', 'updated_at', 'kits where organization_id = $1 and kit_id = $2', [orgId, 'deployer']);
    expect(ms).toBeGreaterThanOrEqual(0);
    expect(ms).toBeLessThan(A_MINUTE_MS);
  });

  it('a key rotation retires the old key at the time its successor is made', async () => {
    await withProcessClockAnHourAhead(async () => {
      const rotation = await call(app.url, '/api/admin/credential-keys/rotate', { apiKey: key, method: 'POST' });
      expect(rotation.status, rotation.text).toBe(202);
      while ((await countRows(app.database.ownerUrl, "graphile_worker.jobs where task_identifier = 'credentials.rotate_keys'")) > 0) await sleep(100);
    });
    const gaps = await gapMs(
      'current.created_at',
      'retired.retired_at',
      'credential_keys retired join credential_keys current on current.organization_id = retired.organization_id and current.retired_at is null where retired.organization_id = $1 and retired.retired_at is not null',
      [orgId],
    );
    expect(gaps).toHaveLength(1);
    expect(Math.abs(gaps[0]!)).toBeLessThan(A_MINUTE_MS);
  });
});
