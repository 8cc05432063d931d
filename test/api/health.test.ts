import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
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
