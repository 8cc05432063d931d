import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
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
let projectId: string;
let credentialId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

// APPLY fails unless the worker opened the credential and handed it over.
const applyHook = `
function apply(context) {
  var token = context.credentials && context.credentials.deploy && context.credentials.deploy.token;
  if (!token) throw new Error('credential not received');
  return { applied: true };
}
`;

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  const kit = sampleKit({ id: 'deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook });
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Deploys' } })).body.data.id;
  const stored = await call(app.url, `/api/${orgId}/kits/credentials`, { apiKey: key, body: { projectId, kitId: 'deployer', credentialType: 'deploy', credentials: { token: 'the-only-deploy-token' } } });
  expect(stored.status, stored.text).toBe(201);
  credentialId = stored.body.data.credentialId;
});
afterAll(() => app?.stop());

const execute = async () => {
  const started = await call(app.url, `/api/${orgId}/kits/deployer/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
  expect(started.status, started.text).toBe(201);
  return started.body.data.executionId as string;
};

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
