import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForBundle } from '../helpers/kit-fixtures.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A bundle that was built and whose blob has gone since (removed by an operator, or a clean-up of
 * the blob store): the blob's foreign key clears the execution's bundle_blob_id. No job builds it
 * again, so the execution must not read "building" for good, nor GET …/bundle say "try again in a
 * moment" for good: it reads failed, and says the bundle is no longer stored.
 */
let app: TestApp;
let key: string;
let orgId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

beforeAll(async () => {
  app = await startTestApp({ mode: 'all' });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'lost-bundle' }) })).status).toBe(201);
});
afterAll(() => app?.stop());

describe('an execution whose bundle blob is gone', () => {
  it('reads bundleStatus "failed" with no path or size, and GET …/bundle says it is no longer stored; an earlier link is NOT_FOUND', async () => {
    const projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Lost bundle' } })).body.data.id;
    const started = await call(app.url, `/api/${orgId}/kits/lost-bundle/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    expect(started.status, started.text).toBe(201);
    const executionId: string = started.body.data.executionId;
    expect(await waitForBundle(app.url, key, orgId, executionId)).toMatchObject({ status: 'completed', bundleStatus: 'ready' });
    const link = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: key });
    expect(link.status, link.text).toBe(200);

    await sqlAsOwner('delete from blobs where id = (select bundle_blob_id from kit_executions where id = $1)', [executionId]);

    const execution = await call(app.url, `/api/${orgId}/kits/executions/${executionId}`, { apiKey: key });
    expect(execution.status, execution.text).toBe(200);
    expect(execution.body.data).toMatchObject({ status: 'completed', bundleStatus: 'failed', bundlePath: null, bundleSizeBytes: null });

    const bundle = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: key });
    expect([bundle.status, bundle.body.error]).toEqual([
      409,
      { code: 'CONFLICT', message: 'The bundle of this execution is no longer stored. Start a new execution.', details: { status: 'completed', bundleStatus: 'failed' } },
    ]);

    const download = await call(app.url, link.body.data.downloadUrl);
    expect([download.status, download.body.error]).toEqual([404, { code: 'NOT_FOUND', message: 'The file behind this link no longer exists' }]);
    // Reading changed nothing and queued nothing.
    expect(await countRows(app.database.ownerUrl, `graphile_worker.jobs where task_identifier = 'kits.bundle_execution'`)).toBe(0);
    expect(await countRows(app.database.ownerUrl, 'kit_executions where id = $1 and bundle_error is null and bundle_blob_id is null', [executionId])).toBe(1);
  });
});
