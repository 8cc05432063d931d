import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';

/**
 * One worker slot, two tenants. Tenant A queues a backlog of slow runs; tenant B then queues one.
 * B's run must not wait behind all of A's: it goes next.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_CONCURRENCY: '1', WORKER_HEARTBEAT_MS: '500' } });
});
afterAll(() => app?.stop());

async function tenantReadyToRun(actor: { apiKey: string; organizationId: string }, kitId: string, planHook?: string) {
  const kit = sampleKit({ id: kitId });
  if (planHook) {
    kit.manifest.hooks.PLAN = 'hooks/plan.js';
    kit.files['hooks/plan.js'] = planHook;
  }
  const published = await call(app.url, `/api/${actor.organizationId}/kits`, { apiKey: actor.apiKey, body: kit });
  expect(published.status, published.text).toBe(201);
  const project = await call(app.url, '/api/projects', { apiKey: actor.apiKey, body: { name: `${kitId} project`, organizationId: actor.organizationId } });
  expect(project.status, project.text).toBe(201);
  return async () => {
    const started = await call(app.url, `/api/${actor.organizationId}/kits/${kitId}/execute`, { apiKey: actor.apiKey, body: sampleExecutionBody(project.body.data.id) });
    expect(started.status, started.text).toBe(201);
    return started.body.data.executionId as string;
  };
}

describe('kit executions of several tenants', () => {
  it('take turns: a tenant\'s first run goes ahead of the rest of another tenant\'s backlog', async () => {
    const tenantA = { apiKey: app.bootstrap.apiKey, organizationId: app.bootstrap.organizationId };
    const tenantB = await createTenant(app, 'Second customer');
    expect((await call(app.url, `/api/admin/tenants/${tenantB.tenantId}/features`, { method: 'PATCH', apiKey: app.bootstrap.apiKey, body: { kits_enabled: true } })).status).toBe(200);
    const runA = await tenantReadyToRun(tenantA, 'slow-backlog', 'function plan() { var until = Date.now() + 400; while (Date.now() < until) {} return {}; }');
    const runB = await tenantReadyToRun(tenantB, 'quick-run');

    const backlog = [await runA(), await runA(), await runA(), await runA()];
    const second = await runB();
    const ended = await Promise.all([...backlog, second].map((id, i) => waitForExecution(app.url, i < backlog.length ? tenantA.apiKey : tenantB.apiKey, i < backlog.length ? tenantA.organizationId : tenantB.organizationId, id, 30_000)));
    expect(ended.map((execution) => execution.status)).toEqual(Array(5).fill('completed'));
    // The order the one worker slot took them in.
    const started = await ownerQuery(app.database.ownerUrl, 'select id from kit_executions where id = any($1) order by started_at', [[...backlog, second]]);
    const order = started.map((row: { id: string }) => (row.id === second ? 'B' : `A${backlog.indexOf(row.id) + 1}`));
    expect(order.indexOf('B'), order.join(' ')).toBeLessThanOrEqual(2);
  });
});
