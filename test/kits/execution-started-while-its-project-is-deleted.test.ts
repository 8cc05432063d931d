import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit } from '../helpers/kit-fixtures.ts';
import { whileTransactionHolds } from '../helpers/lock-holder.ts';
import { countRows } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * POST …/execute racing the deletion of its project: the execution either starts before the
 * project goes (and goes with it) or is NOT_FOUND on field projectId — never a 500 from the
 * foreign key, never an execution or a job left behind naming a project that is gone.
 */
let app: TestApp;
let key: string;
let orgId: string;
const rows = (from: string, values: unknown[] = []) => countRows(app.database.ownerUrl, from, values);

beforeAll(async () => {
  app = await startTestApp({ mode: 'api' });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'late-kit' }) })).status).toBe(201);
});
afterAll(() => app?.stop());

describe('an execution started while its project is being deleted', () => {
  it('is NOT_FOUND on field projectId once the delete commits, and leaves no execution or job', async () => {
    const projectId: string = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Going' } })).body.data.id;
    const jobsBefore = await rows(`graphile_worker.jobs where task_identifier = 'kits.execute'`);
    const started = await whileTransactionHolds(
      app.database.ownerUrl,
      (holder) => holder.query('delete from projects where id = $1', [projectId]),
      () => call(app.url, `/api/${orgId}/kits/late-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) }),
    );
    expect([started.status, started.body.error]).toEqual([404, { code: 'NOT_FOUND', message: 'The project was not found', details: { field: 'projectId' } }]);
    expect(await rows('kit_executions where project_id = $1', [projectId])).toBe(0);
    expect(await rows(`graphile_worker.jobs where task_identifier = 'kits.execute'`)).toBe(jobsBefore);
  });
});
