import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The routers take `/api/health` in any letter case and with a trailing slash, and `/trpc` in any
 * letter case. A load balancer probing one of those spellings must be told what `/api/health` says
 * while the database is away (200, `database: down`), not a 503 that takes the node out of service
 * for the wrong reason.
 */
const spellings = ['/api/health/', '/API/health', '/Api/Health/', '/TRPC/health.check'];
const reportOf = (path: string, body: any) => (path.toLowerCase().startsWith('/trpc') ? body?.result?.data : body?.data);

let up: TestApp;
let down: TestApp;
beforeAll(async () => {
  up = await startTestApp();
  down = await startTestApp({ env: { APP_DATABASE_URL: 'postgres://specwright_app:wrong@127.0.0.1:1/specwright' } });
});
afterAll(async () => {
  await down?.stop();
  await up?.stop();
});

describe('the health check, however its path is spelt', () => {
  it.each(spellings)('%s is the health check while the database is up', async (path) => {
    const response = await call(up.url, path);
    expect(response.status, response.text).toBe(200);
    expect(reportOf(path, response.body)).toMatchObject({ database: { status: 'up' } });
  });

  it.each(spellings)('%s says the database is down while it cannot be reached (GET and HEAD)', async (path) => {
    const response = await call(down.url, path);
    expect(response.status, response.text).toBe(200);
    expect(reportOf(path, response.body)).toMatchObject({ status: 'degraded', database: { status: 'down' } });
    expect((await call(down.url, path, { method: 'HEAD' })).status).toBe(200);
  });
});
