import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDatabaseRelay, type DatabaseRelay } from '../helpers/database-relay.ts';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForBundle } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The database commits the transaction that records an execution's outcome, and its answer to
 * COMMIT is lost on the way back (the connection drops): the worker sees an error although the
 * outcome is stored. On the job's last attempt the worker then ends the execution failed, "could
 * not be recorded" — which the database refuses, since the execution is no longer running; but the
 * same transaction deleted the outputs the committed outcome counts, so the execution read
 * `completed` with `outputCount` 3 and no outputs, and its bundle job found nothing to bundle.
 */
let api: TestApp;
let worker: TestApp | undefined;
let relay: DatabaseRelay | undefined;
let key: string;
let orgId: string;
let projectId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, sql, values);

beforeAll(async () => {
  api = await startTestApp({ mode: 'api' });
  key = api.bootstrap.apiKey;
  orgId = api.bootstrap.organizationId;
  expect((await call(api.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'lost-answer' }) })).status).toBe(201);
  projectId = (await call(api.url, '/api/projects', { apiKey: key, body: { name: 'Lost answers' } })).body.data.id;
});
afterAll(async () => {
  await worker?.stop();
  relay?.close();
  await api?.stop();
});

describe('an execution whose outcome was stored on its last attempt, the answer to that COMMIT lost', () => {
  it('keeps its outcome and its outputs, and its bundle is built from them', async () => {
    const started = await call(api.url, `/api/${orgId}/kits/lost-answer/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    expect(started.status, started.text).toBe(201);
    const { executionId, workerRunId } = started.body.data;
    // The attempt about to run is the job's last.
    await sqlAsOwner('update graphile_worker._private_jobs set max_attempts = 1 where id = $1', [workerRunId]);

    const lossy = await startDatabaseRelay(new URL(api.database.ownerUrl));
    relay = lossy;
    // The connection whose transaction stored kit outputs loses the answer to its COMMIT.
    lossy.loseOneAnswer(() => {
      let storedOutputs = false;
      return (sent) => {
        const text = sent.toLowerCase();
        storedOutputs ||= text.includes('insert into "kit_outputs"');
        return storedOutputs && text.includes('commit\u0000');
      };
    });
    worker = await startTestApp({ mode: 'worker', database: api.database, env: { DATABASE_URL: lossy.urlFor(api.database.ownerUrl), WORKER_HEARTBEAT_MS: '500' } });

    const done = await waitForBundle(api.url, key, orgId, executionId, 15_000).catch((error: Error) => error);
    expect(lossy.answerLost).toBe(true);
    // The job is over: nothing will write this execution again.
    const jobsOver = Date.now() + 10_000;
    while ((await sqlAsOwner(`select 1 from graphile_worker.jobs where task_identifier = 'kits.execute' and locked_at is not null`)).length > 0 && Date.now() < jobsOver) await sleep(50);
    const execution = (await call(api.url, `/api/${orgId}/kits/executions/${executionId}`, { apiKey: key })).body.data;
    expect(done).not.toBeInstanceOf(Error);
    expect(execution).toMatchObject({ status: 'completed', outputCount: 3, outputsValid: 3, errorMessage: null, bundleStatus: 'ready' });
    expect(execution.outputs).toHaveLength(3);
    const output = await call(api.url, `/api/${orgId}/kits/executions/${executionId}/outputs/${execution.outputs[0].outputId}`, { apiKey: key });
    expect(output.status, output.text).toBe(200);
    // The worker's log says what happened: the outcome stands; no error claims it failed.
    const messages = worker.logLines.map((line) => line.msg);
    expect(messages).toContain('kit execution outcome was stored although its answer was lost; it stands');
    expect(messages.filter((msg) => typeof msg === 'string' && msg.startsWith('kit execution could not be recorded'))).toEqual([]);
  }, 60_000);
});
