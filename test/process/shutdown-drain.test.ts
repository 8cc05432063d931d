import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody } from '../helpers/kit-fixtures.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** What shutdown does with work that is still arriving: no new jobs, and no connection kept open. */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.stop().catch(() => {});
  app = undefined;
});

const slowKit = {
  manifest: {
    metadata: { id: 'slow-plan', displayName: 'Slow', version: '1.0.0', description: 'test', author: 'test', kitType: 'file' },
    platform: { name: 'none', category: 'test' },
    phases: ['PLAN'],
    discovery: { pools: [] },
    outputs: [{ id: 'only', filename: 'only.md', template: 't/out.hbs', outputType: 'text' }],
    hooks: { PLAN: 'h/plan.js' },
  },
  files: { 't/out.hbs': 'hello\n', 'h/plan.js': 'function plan() { var until = Date.now() + 700; while (Date.now() < until) {} return {}; }' },
};

describe('shutdown', () => {
  it('takes no new job from the moment it begins, while the HTTP server is still draining', async () => {
    app = await startTestApp({ mode: 'all', env: { SHUTDOWN_GRACE_MS: '3000', WORKER_CONCURRENCY: '1' } });
    const { apiKey: key, organizationId: orgId } = app.bootstrap;
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: slowKit })).status).toBe(201);
    const projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Queued' } })).body.data.id;
    for (let i = 0; i < 5; i += 1) {
      expect((await call(app.url, `/api/${orgId}/kits/slow-plan/execute`, { apiKey: key, body: sampleExecutionBody(projectId) })).status).toBe(201);
    }
    const ownerUrl = app.database.ownerUrl;
    const sql = (text: string) => ownerQuery(ownerUrl, text, []);
    while ((await countRows(ownerUrl, "kit_executions where status = 'running'")) === 0) await new Promise((r) => setTimeout(r, 20));
    // A client that never finishes its request holds the HTTP drain for the whole grace period.
    const port = Number(new URL(app.url).port);
    const stalled = connect(port, '127.0.0.1', () => stalled.write('GET /api/health HTTP/1.1\r\nHost: x\r\n'));
    stalled.on('error', () => {});
    await new Promise((resolve) => stalled.once('connect', resolve));

    const [{ now: shutdownBegan }] = await sql('select clock_timestamp() as now');
    await app.stop();
    app = undefined;
    stalled.destroy();
    // Started after shutdown began: the worker used to keep claiming jobs until the HTTP server drained.
    const late = await sql(`select id from kit_executions where started_at > '${(shutdownBegan as Date).toISOString()}'::timestamptz + interval '100 milliseconds'`);
    expect(late).toEqual([]);
    expect(await countRows(ownerUrl, "kit_executions where status = 'pending'")).toBeGreaterThan(0);
  });

  // With a grace period longer than the test may run: kept alive, the connection held shutdown for all of it.
  it('answers a request in flight with Connection: close, so its keep-alive connection does not hold shutdown', { timeout: 20_000 }, async () => {
    app = await startTestApp({ env: { SHUTDOWN_GRACE_MS: '60000' } });
    const { apiKey: key } = app.bootstrap;
    const projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Locked' } })).body.data.id;
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    const agent = new Agent({ keepAlive: true });
    try {
      await holder.query('begin');
      await holder.query('select id from projects where id = $1 for update', [projectId]);
      const answered = new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const req = request(`${app!.url}/api/projects/${projectId}`, { method: 'PATCH', agent, headers: { 'x-api-key': key, 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ name: 'Renamed during shutdown' }));
      });
      await untilLockWaiters(app.database.ownerUrl);
      const stopping = app.stop();
      app = undefined;
      await new Promise((resolve) => setTimeout(resolve, 200));
      await holder.query('commit');
      expect(await answered).toEqual({ status: 200, connection: 'close' });
      await stopping;
    } finally {
      agent.destroy();
      await holder.end();
    }
  });
});
