import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The API's connections are cut by PostgreSQL (pg_terminate_backend, as a restart or failover
 * does) while read-only COMMITs are sent behind and statement batches are in flight: a caller
 * gets its answer or SERVICE_UNAVAILABLE with Retry-After, never INTERNAL_ERROR nor a hang, and
 * the service recovers by itself.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
});
afterAll(() => app?.stop());

const terminateApiConnections = () =>
  ownerQuery(app.database.ownerUrl, `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'specwright-api' and datname = current_database()`);

describe('API connections terminated between and during requests', () => {
  it('answer 200 or 503 with Retry-After, and the service recovers', async () => {
    const statuses = new Map<number, number>();
    for (let round = 0; round < 15; round += 1) {
      const requests = Array.from({ length: 8 }, () => call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey }));
      const killing = round % 2 === 0 ? terminateApiConnections() : Promise.resolve();
      const responses = await Promise.all(requests);
      await killing;
      for (const response of responses) {
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        expect([200, 503], response.text).toContain(response.status);
        if (response.status === 503) {
          expect(response.body.error.code).toBe('SERVICE_UNAVAILABLE');
          expect(response.headers.get('retry-after')).toBe('2');
        }
      }
      if (round % 2 === 1) await terminateApiConnections();
    }
    console.log('statuses', Object.fromEntries(statuses));
    // Every dead connection has left the pool: the next requests all pass.
    for (let i = 0; i < 5; i += 1) expect((await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey })).status).toBe(200);
  });
});
