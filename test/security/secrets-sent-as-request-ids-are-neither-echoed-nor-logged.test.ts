import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * X-Request-ID is echoed in the answer and written on every log line of the request, and its
 * charset (A-Z a-z 0-9 . _ : -) is an API key's. A key pasted into it (a script that mixes up its
 * variables) must not become the request id: it is replaced by a fresh one, and the logged headers
 * blank it, as they blank one pasted into X-Tenant-ID.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('a secret sent where an id belongs', () => {
  it('an API key as X-Request-ID is not echoed, and no log line holds it', async () => {
    const key = app.bootstrap.apiKey;
    const response = await call(app.url, '/api/me', { apiKey: key, headers: { 'x-request-id': key } });
    expect(response.status, response.text).toBe(200);
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body.metadata.requestId).toBe(requestId);
    expect(response.text).not.toContain(key);
    expect(app.rawLog.filter((line) => line.includes(requestId!)).length).toBeGreaterThan(0);
    expect(app.rawLog.filter((line) => line.includes(key.slice(17)))).toEqual([]);
  });

  it('an API key as X-Tenant-ID (refused) stays out of the log too', async () => {
    const key = app.bootstrap.apiKey;
    const response = await call(app.url, '/api/me', { apiKey: key, headers: { 'x-tenant-id': key, 'x-request-id': 'tenant-header-paste' } });
    expect(response.status).toBe(400);
    expect(app.rawLog.filter((line) => line.includes('tenant-header-paste')).length).toBeGreaterThan(0);
    expect(app.rawLog.filter((line) => line.includes(key.slice(17)))).toEqual([]);
  });

  it('an ordinary request id is still honoured and logged as sent', async () => {
    const response = await call(app.url, '/api/health', { headers: { 'x-request-id': 'deploy-42:step_3.b' } });
    expect(response.headers.get('x-request-id')).toBe('deploy-42:step_3.b');
    expect(response.body.metadata.requestId).toBe('deploy-42:step_3.b');
    const lines = app.logLines.filter((line) => line.requestId === 'deploy-42:step_3.b');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.map((line) => (line.req as { headers?: Record<string, unknown> } | undefined)?.headers?.['x-request-id']).filter(Boolean)).toContain('deploy-42:step_3.b');
  });
});
