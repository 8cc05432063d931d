import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { until } from '../helpers/until.ts';

/**
 * A bundle job that used its last attempt without recording why (the database refusing the build,
 * then the failure too) will never build the bundle. bundleStatus must not read "building" for
 * ever: it ends "failed", and GET …/bundle says why, as when the last attempt could record it.
 */
let app: TestApp;
let key: string;
let orgId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

beforeAll(async () => {
  // The reaper that ends the bundle ignores heartbeats, but judges only after a whole stale period of
  // its own steady beats: 500 ms beats give it that on a loaded machine, where 200 ms ones (a beat
  // 100 ms late or 200 ms slow is a gap) could keep it waiting past the test's deadline.
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', WORKER_STALE_AFTER_MS: '2000', RATE_LIMIT_GENERAL_PER_MINUTE: '10000' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'plain-kit' }) })).status).toBe(201);
});
afterAll(() => app?.stop());

describe('an execution whose bundle job failed its last attempt and could not record it', () => {
  it('reads bundleStatus "failed", and GET …/bundle says it could not be built — not "building" for good', async () => {
    const projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Bundle never built' } })).body.data.id;
    // Bundle jobs get one attempt (8 would take half an hour); the database refuses, as a passing
    // conflict would, both the bundle and the record of its failure.
    await sqlAsOwner(`
      create function test_one_attempt() returns trigger language plpgsql as $$ begin if new.key like 'kit-bundle:%' then new.max_attempts := 1; end if; return new; end $$;
      create trigger test_one_attempt before insert on graphile_worker._private_jobs for each row execute function test_one_attempt();
      create function test_refuse_for_now() returns trigger language plpgsql as $$ begin raise exception 'conflict' using errcode = '40001'; end $$;
      create trigger test_blob_refused before insert on blobs for each row execute function test_refuse_for_now();
      create trigger test_bundle_error_refused before update on kit_executions for each row when (new.bundle_error is not null) execute function test_refuse_for_now();
    `);
    let executionId: string;
    try {
      const started = await call(app.url, `/api/${orgId}/kits/plain-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
      expect(started.status, started.text).toBe(201);
      executionId = started.body.data.executionId;
      expect(await waitForExecution(app.url, key, orgId, executionId)).toMatchObject({ status: 'completed', bundleStatus: 'building' });
      await until('the bundle job has failed its last attempt', async () => {
        const [job] = await sqlAsOwner(`select attempts, locked_at, last_error from graphile_worker.jobs where key = $1`, [`kit-bundle:${executionId}`]);
        return job?.attempts === 1 && job.locked_at === null && job.last_error !== null;
      });
    } finally {
      await sqlAsOwner(`
        drop trigger test_one_attempt on graphile_worker._private_jobs; drop function test_one_attempt();
        drop trigger test_blob_refused on blobs; drop trigger test_bundle_error_refused on kit_executions; drop function test_refuse_for_now();
      `);
    }
    // The database is well again; nothing will build the bundle any more.
    await until('bundleStatus leaves "building"', async () => {
      const got = await call(app.url, `/api/${orgId}/kits/executions/${executionId}`, { apiKey: key });
      return got.body.data.bundleStatus !== 'building';
    }, 30_000);
    const execution = await call(app.url, `/api/${orgId}/kits/executions/${executionId}`, { apiKey: key });
    expect(execution.body.data).toMatchObject({ status: 'completed', bundleStatus: 'failed' });
    const bundle = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: key });
    expect(bundle.status).toBe(409);
    expect(bundle.body.error.message).toBe('The bundle of this execution could not be built: building it failed on each of its attempts. Start a new execution.');
  }, 60_000);
});
