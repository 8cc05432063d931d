import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Requests run as the app role on APP_DATABASE_URL; here it points at a port nobody listens on, as
 * when PostgreSQL is down: health still reports, and every other request is SERVICE_UNAVAILABLE, not
 * an unexplained INTERNAL_ERROR.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { APP_DATABASE_URL: 'postgres://specwright_app:wrong@127.0.0.1:1/specwright' } });
});
afterAll(() => app?.stop());

describe('while the database cannot be reached', () => {
  it('the start goes on, warning that APP_DATABASE_URL cannot be reached yet, without its password', () => {
    const warnings = app.logLines.filter((line) => line.level === 40 && String(line.msg).includes('APP_DATABASE_URL cannot be reached yet'));
    expect(warnings).toHaveLength(1);
    expect(app.rawLog.join('\n')).not.toContain(':wrong@');
  });

  it('GET /api/health answers, saying the database is down', async () => {
    for (const path of ['/api/health', '/trpc/health.check']) {
      const response = await call(app.url, path);
      expect(response.status, response.text).toBe(200);
      const report = path.startsWith('/trpc') ? response.body.result.data : response.body.data;
      expect(report).toMatchObject({ status: 'degraded', database: { status: 'down' } });
    }
  });

  it('other requests answer SERVICE_UNAVAILABLE (503), say why and when to try again', async () => {
    const response = await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey });
    expect(response.status, response.text).toBe(503);
    expect(response.body.error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'The database cannot be reached; try again shortly' });
    expect(response.headers.get('retry-after')).toBe('2');
    const trpc = await call(app.url, '/trpc/projects.list', { apiKey: app.bootstrap.apiKey });
    expect([trpc.status, trpc.body.error.data.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    expect(trpc.headers.get('retry-after')).toBe('2');
  });
});
