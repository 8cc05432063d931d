import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../control-plane/auth/api-key-format.ts';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant } from '../helpers/tenant-fixtures.ts';

/**
 * An API key is counted before it is checked (the count runs beside authentication). One that does
 * not authenticate is then counted against the client address instead — and its own counter must
 * not stay behind: one row per made-up key would let anyone fill `rate_limits` at the speed they
 * can send requests, whatever their address's budget.
 */
let app: TestApp;
const counters = async (pattern: string) =>
  (await ownerQuery<{ key: string; points: number }>(app.database.ownerUrl, 'select key, points from rate_limits where key like $1 order by key', [pattern]));

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '1000', RATE_LIMIT_PER_HOUR: '5000' } });
});
afterAll(() => app?.stop());

describe('a key that does not authenticate', () => {
  it('leaves no counter of its own, however it is made up, and is counted against the client address', async () => {
    const madeUp = [...Array.from({ length: 10 }, () => generateApiKey().key), ...Array.from({ length: 10 }, (_, i) => `not-a-key-${i}`)];
    for (const key of madeUp) {
      // A public route runs for them; a tRPC batch of three costs three points.
      expect((await call(app.url, '/api/health', { apiKey: key })).status).toBe(200);
      expect((await call(app.url, '/trpc/health.check,health.check,health.check?batch=1&input={}', { apiKey: key })).status).toBe(200);
    }
    expect(await counters('%:key:%')).toEqual([]);
    expect(await counters('%:ip:127.0.0.1')).toEqual([
      { key: 'general:ip:127.0.0.1', points: 80 },
      { key: 'hourly:ip:127.0.0.1', points: 80 },
    ]);
  });

  it('leaves none either when several requests bring the same made-up key at once', async () => {
    for (let round = 0; round < 5; round += 1) {
      const key = generateApiKey().key;
      const statuses = await Promise.all(Array.from({ length: 4 }, () => call(app.url, '/api/health', { apiKey: key }).then((response) => response.status)));
      expect(statuses).toEqual([200, 200, 200, 200]);
    }
    expect(await counters('%:key:%')).toEqual([]);
  });

  it("leaves a real key's counter its other requests' points, when the request it came with is refused", async () => {
    const member = await createUserInTenant(app, (sql, values) => ownerQuery(app.database.ownerUrl, sql, values), app.bootstrap.tenantId, 'Member');
    const elsewhere = await createTenant(app, 'Elsewhere');
    expect((await call(app.url, '/api/me', { apiKey: member.apiKey })).headers.get('x-ratelimit-remaining')).toBe('999');
    // Only platform admins may name another tenant: the key is good, the request is refused.
    const refused = await call(app.url, '/api/me', { apiKey: member.apiKey, headers: { 'x-tenant-id': elsewhere.tenantId } });
    expect(refused.status).toBe(403);
    // The refused request counted against the address alone; deleted, the key's counter would start afresh at 999.
    expect((await call(app.url, '/api/me', { apiKey: member.apiKey })).headers.get('x-ratelimit-remaining')).toBe('998');
  });

  it('brings no fresh budget when X-E2E-Test-Mode authenticates the request instead', async () => {
    const limited = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '3', E2E_TEST_MODE: 'true' } });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i += 1) {
        statuses.push((await call(limited.url, '/api/me', { apiKey: generateApiKey().key, headers: { 'x-e2e-test-mode': 'true' } })).status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await limited.stop();
    }
  });
});
