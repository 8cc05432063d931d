import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDatabaseRelay, type DatabaseRelay } from '../helpers/database-relay.ts';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { mainProcessesStoppedAfterAll, untilOutput } from '../helpers/main-process.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { lockTableUntilReleased } from '../helpers/table-lock-gate.ts';

/**
 * A worker process reaches PostgreSQL through a relay the test can cut, as a failover or a network
 * blip would: connections in use break, new ones are refused, then all is well again.
 */
const startMain = mainProcessesStoppedAfterAll();
let api: TestApp;
let relay: DatabaseRelay;

beforeAll(async () => {
  api = await startTestApp({ mode: 'api' });
  relay = await startDatabaseRelay(new URL(api.database.ownerUrl));
});
afterAll(async () => {
  relay?.close();
  await api?.stop();
});

/** How long the database stays away: what is asserted holds whatever the worker manages meanwhile. */
const OUTAGE_MS = 6_000;

describe('a database that is briefly away while the worker runs a job', () => {
  it('is waited out: the worker process stays up and the execution completes on its next attempt', async () => {
    const key = api.bootstrap.apiKey;
    const orgId = api.bootstrap.organizationId;
    // A quick kit: the test, not a busy hook, decides when the database goes away. (A PLAN busy for
    // 1.5 s had to end after the cut and before the reopening, and within the run's 5 s time limit.)
    expect((await call(api.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'blip-kit' }) })).status).toBe(201);
    const projectId = (await call(api.url, '/api/projects', { apiKey: key, body: { name: 'Blip' } })).body.data.id;

    const worker = startMain('worker', {
      DATABASE_URL: relay.urlFor(api.database.ownerUrl),
      APP_DATABASE_URL: api.database.appUrl,
      SERVER_SECRET: TEST_SERVER_SECRET,
      DATA_DIR: await scratchDir('blip'),
      LOG_LEVEL: 'info',
    });
    await untilOutput(worker, /worker started/, 30_000);

    // Storing the outcome waits behind this lock: the kit has run, and its outcome is on its way to
    // the database, when the database goes away, however slow the machine.
    const outputs = await lockTableUntilReleased(api.database.ownerUrl, 'kit_outputs');
    let executionId: string;
    try {
      const started = await call(api.url, `/api/${orgId}/kits/blip-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
      expect(started.status, started.text).toBe(201);
      executionId = started.body.data.executionId;
      await outputs.untilWaitedOn('the worker stores the outcome').catch((error: Error) => {
        throw new Error(`${error.message}; worker output:\n${worker.output()}`);
      });
      expect((await ownerQuery(api.database.ownerUrl, 'select status from kit_executions where id = $1', [executionId]))[0].status).toBe('running');

      await relay.cut();
      // What the cut left of that store in PostgreSQL ends as a failover ends it.
      await outputs.endWaiters();
    } finally {
      await outputs.release();
    }
    await sleep(OUTAGE_MS);
    expect(worker.child.exitCode, worker.output()).toBeNull();
    const reopenedAt = Date.now();
    await relay.restore();

    const ended = await waitForExecution(api.url, key, orgId, executionId, 30_000);
    expect(ended.status, `${ended.errorMessage}\n${worker.output()}`).toBe('completed');
    // The kit had finished (and its outcome was waiting to be stored) while the database was away.
    expect(Date.parse(ended.startedAt) + ended.executionTimeMs, 'the run outlasted the outage, so nothing was tested').toBeLessThan(reopenedAt);
    expect(worker.child.exitCode, worker.output()).toBeNull();
    expect(worker.output()).not.toMatch(/unhandled|a failure nothing handled/i);
  }, 120_000);
});
