import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit } from '../helpers/kit-fixtures.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { until } from '../helpers/until.ts';

/**
 * DELETE of a project races the job building one of its executions' bundles. Whichever commits
 * first, the project goes with every row and blob of it: no bundle blob is left that nothing names,
 * and the job ends without an error (nothing is retried, nothing is recorded as failed).
 */
let app: TestApp;
let key: string;
let orgId: string;
const rows = (from: string, values: unknown[] = []) => countRows(app.database.ownerUrl, from, values);

beforeAll(async () => {
  app = await startTestApp({ mode: 'all' });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'raced-kit' }) })).status).toBe(201);
  // Storing a blob waits while the test holds advisory lock 4242: the bundle job's ZIP is built
  // and waits there, inside its transaction, to be stored.
  await ownerQuery(app.database.ownerUrl, `
    create function test_blob_waits() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock_shared(4242); return new; end $$;
    create trigger test_blob_waits before insert on blobs for each row execute function test_blob_waits();
  `);
});
afterAll(() => app?.stop());

/** A connection of the owner's with a transaction open, for holding locks. */
async function holder() {
  const client = new pg.Client({ connectionString: app.database.ownerUrl });
  await client.connect();
  await client.query('begin');
  return { client, release: async () => { await client.query('commit'); await client.end(); } };
}

/**
 * Runs an execution while advisory lock 4242 is held, so its bundle job waits to store the ZIP:
 * answers the project and the execution once the job is waiting, with the lock still held.
 */
async function executionWhoseBundleJobWaits() {
  const projectId: string = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Raced' } })).body.data.id;
  const blobs = await holder();
  await blobs.client.query('select pg_advisory_xact_lock(4242)');
  const started = await call(app.url, `/api/${orgId}/kits/raced-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
  expect(started.status, started.text).toBe(201);
  const executionId: string = started.body.data.executionId;
  await until('the execution has ended', async () => (await rows(`kit_executions where id = $1 and status not in ('pending', 'running')`, [executionId])) === 1);
  await untilLockWaiters(app.database.ownerUrl, 1);
  return { projectId, executionId, blobs };
}

const deleteProject = (projectId: string) => call(app.url, `/api/projects/${projectId}`, { apiKey: key, method: 'DELETE' });

async function expectNothingLeft(projectId: string, executionId: string) {
  await until('the bundle job has finished', async () => (await rows(`graphile_worker.jobs where key = $1`, [`kit-bundle:${executionId}`])) === 0);
  expect(await rows('projects where id = $1', [projectId])).toBe(0);
  expect(await rows('kit_executions where id = $1', [executionId])).toBe(0);
  expect(await rows('kit_outputs where execution_id = $1', [executionId])).toBe(0);
  // Every blob is some execution's bundle.
  expect(await rows('blobs b where not exists (select 1 from kit_executions e where e.bundle_blob_id = b.id)')).toBe(0);
}

describe('a project deleted while a bundle of it is being built', () => {
  it('when the delete commits first: the bundle is not stored', async () => {
    const { projectId, executionId, blobs } = await executionWhoseBundleJobWaits();
    const deleted = await deleteProject(projectId);
    expect(deleted.status, deleted.text).toBe(200);
    await blobs.release();
    await expectNothingLeft(projectId, executionId);
  });

  it('when the bundle is attached first: the delete removes it with the execution', async () => {
    const { projectId, executionId, blobs } = await executionWhoseBundleJobWaits();
    // The execution's row is held too: the job, once it has stored the blob, waits to attach it,
    // and the delete waits behind it.
    const row = await holder();
    await row.client.query('select 1 from kit_executions where id = $1 for update', [executionId]);
    await blobs.release();
    await untilLockWaiters(app.database.ownerUrl, 1);
    const deleting = deleteProject(projectId);
    await untilLockWaiters(app.database.ownerUrl, 2);
    await row.release();
    const deleted = await deleting;
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body.data.deletedTables).toContain('blobs');
    await expectNothingLeft(projectId, executionId);
  });
});
