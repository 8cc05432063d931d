import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { withProcessClockAnHourAhead } from '../helpers/process-clock-ahead.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('GET /api/health', () => {
  it('is public and reports the database up and no worker', async () => {
    const response = await call(app.url, '/api/health');
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    expect(response.body.data.database.status).toBe('up');
    expect(response.body.data.worker).toEqual({ status: 'down', lastHeartbeatAt: null });
    expect(response.body.data.status).toBe('degraded');
  });
});

describe('GET /api/health on an API node whose clock is an hour ahead of the database', () => {
  it("judges the worker's heartbeat by the database's clock, which stamped it: a worker that just beat is up", async () => {
    await ownerQuery(app.database.ownerUrl, `insert into worker_heartbeats (worker_id) values ('worker-that-just-beat')`);
    try {
      const response = await withProcessClockAnHourAhead(() => call(app.url, '/api/health'));
      expect(response.body.data.worker).toEqual({ status: 'up', lastHeartbeatAt: expect.any(String) });
    } finally {
      await ownerQuery(app.database.ownerUrl, `delete from worker_heartbeats where worker_id = 'worker-that-just-beat'`);
    }
  });
});

describe('GET /api/health while the rate count cannot be taken', () => {
  it('still answers: a probe is not held by a statement that waits (here on a locked table)', async () => {
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table rate_limits in access exclusive mode');
      const answer = await Promise.race([
        call(app.url, '/api/health'),
        new Promise<string>((resolve) => setTimeout(() => resolve('no answer after 10 s'), 10_000)),
      ]);
      expect(answer).toMatchObject({ status: 200, body: { data: { database: { status: 'up' } } } });
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
  }, 20_000);
});
