import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishDeployerWithCredential, waitForExecution } from '../helpers/kit-fixtures.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A credential that opens is recorded as checked (`last_check_status`) before the run gets it.
 * Here that write is cancelled while it waits on the row's lock, as a statement timeout, a
 * failover or an operator cancelling a blocked query would: the credential opened, so it must not
 * be marked invalid for the database's trouble, nor the run fail as if it had not opened.
 */
let app: TestApp;
let key: string;
let orgId: string;
let credentialId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

let execute: () => Promise<string>;

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  ({ credentialId, execute } = await publishDeployerWithCredential(app.url, key, orgId, 'the-only-deploy-token'));
});
afterAll(() => app?.stop());

describe('a credential that opened, when recording its check fails for a reason of the server\'s own', () => {
  it('stays active, and the execution runs again instead of failing as "could not be opened"', async () => {
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    let executionId: string;
    try {
      await holder.query('begin');
      await holder.query('select id from kit_credentials where id = $1 for update', [credentialId]);
      executionId = await execute();
      await untilLockWaiters(app.database.ownerUrl);
      const [cancelled] = await sqlAsOwner(
        `select count(pg_cancel_backend(pid)) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%last_check_status%'`,
      );
      expect(Number(cancelled.count)).toBe(1);
      await holder.query('commit');
    } finally {
      await holder.end();
    }

    const first = await waitForExecution(app.url, key, orgId, executionId, 30_000);
    expect(first.status, first.errorMessage).toBe('completed');
    expect((await sqlAsOwner('select status, last_check_status from kit_credentials where id = $1', [credentialId]))[0]).toEqual({ status: 'active', last_check_status: 'succeeded' });
    const second = await waitForExecution(app.url, key, orgId, await execute(), 30_000);
    expect(second.status, second.errorMessage).toBe('completed');
    expect(app.rawLog.join('\n')).toContain('a credential could not be opened for a reason of the server');
  });
});
