import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishDeployerWithCredential, waitForExecution } from '../helpers/kit-fixtures.ts';
import { holdTableLock, untilLockWaiters } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The worker loads the credential key ring the first time a run needs a credential. Here that load
 * loses its connection (its backend is terminated while it waits on a lock), as a failover would.
 */
let app: TestApp;
let key: string;
let orgId: string;

let execute: () => Promise<string>;

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  ({ execute } = await publishDeployerWithCredential(app.url, key, orgId, 'a-deploy-token-long-enough'));
});
afterAll(() => app?.stop());

describe('a credential key ring load that fails for a reason of the server\'s own', () => {
  it('runs the execution again instead of failing it as "could not be opened", and is not remembered by later runs', async () => {
    const release = await holdTableLock(app.database.ownerUrl, 'credential_keys');
    let executionId: string;
    try {
      executionId = await execute();
      await untilLockWaiters(app.database.ownerUrl);
      const [terminated] = await ownerQuery(
        app.database.ownerUrl,
        `select count(pg_terminate_backend(pid)) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%credential_keys%'`,
      );
      expect(Number(terminated.count)).toBe(1);
    } finally {
      await release();
    }

    const first = await waitForExecution(app.url, key, orgId, executionId, 30_000);
    expect(first.status, first.errorMessage).toBe('completed');
    const second = await waitForExecution(app.url, key, orgId, await execute(), 30_000);
    expect(second.status, second.errorMessage).toBe('completed');
    expect(app.rawLog.join('\n')).toContain('a credential could not be opened for a reason of the server');
  });
});
