import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ApiResponse } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createUserInTenant } from '../helpers/tenant-fixtures.ts';

/**
 * With RATE_LIMIT_PER_HOUR set, a request passes two budgets: its class's per minute and the
 * hourly one. The X-RateLimit-* headers must describe the one that will refuse first: a client
 * that reads "97 remaining" and is refused on its next request has been told something false.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100', RATE_LIMIT_PER_HOUR: '3' } });
});
afterAll(() => app?.stop());

const newKey = async (name: string) => (await createUserInTenant(app, (sql, values) => ownerQuery(app.database.ownerUrl, sql, values), app.bootstrap.tenantId, name)).apiKey;
const headersOf = (response: ApiResponse) => ({
  status: response.status,
  limit: response.headers.get('x-ratelimit-limit'),
  remaining: response.headers.get('x-ratelimit-remaining'),
  resetIn: Number(response.headers.get('x-ratelimit-reset')) - Date.now() / 1000,
});

describe('X-RateLimit-* when the hourly budget is the tighter one', () => {
  it('counts down the hourly budget, which reaches 0 just as the next request is refused', async () => {
    const apiKey = await newKey('Hourly');
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(headersOf(await call(app.url, '/api/me', { apiKey })));
    expect(answers.map(({ status, limit, remaining }) => [status, limit, remaining])).toEqual([
      [200, '3', '2'],
      [200, '3', '1'],
      [200, '3', '0'],
      [429, '3', '0'],
    ]);
    // The hourly window's reset, not the minute's.
    for (const answer of answers) expect(answer.resetIn).toBeGreaterThan(120);
  });

  it('counts a tRPC batch against the hourly budget in its headers too', async () => {
    const apiKey = await newKey('Batch');
    const batch = await call(app.url, `/trpc/me.get,me.get?batch=1&input=${encodeURIComponent('{}')}`, { apiKey });
    expect([batch.status, batch.headers.get('x-ratelimit-limit'), batch.headers.get('x-ratelimit-remaining')]).toEqual([200, '3', '1']);
  });
});
