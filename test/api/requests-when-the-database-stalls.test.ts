import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDatabaseRelay, type DatabaseRelay } from '../helpers/database-relay.ts';
import { call } from '../helpers/http.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A request's statements are bounded (DATABASE_STATEMENT_TIMEOUT_MS): one that waits too long on a
 * database that is alive but stuck (a lock held elsewhere) is cancelled by PostgreSQL, and one on a
 * connection whose server went silent (a frozen host, a path that drops packets) is given up by the
 * service. Either way the caller gets SERVICE_UNAVAILABLE with Retry-After, nothing is changed, and
 * the service serves again as soon as the database does. Without the bound both requests waited
 * for ever (pg has no timeout of its own; TCP gives up on a silent peer after about 15 minutes).
 */
const STATEMENT_TIMEOUT_MS = 600;
let app: TestApp;
let relay: DatabaseRelay;
let key: string;
let projectId: string;
beforeAll(async () => {
  const database = await createTestDatabase();
  relay = await startDatabaseRelay(new URL(database.appUrl));
  app = await startTestApp({
    database,
    env: { APP_DATABASE_URL: relay.urlFor(database.appUrl), DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      // Long, so that only the statement bound can answer a request below.
      DATABASE_CONNECT_TIMEOUT_MS: '60000',
      LOG_LEVEL: 'warn',
    },
  });
  key = app.bootstrap.apiKey;
  projectId = (await call(app.url, '/api/projects', { body: { name: 'Stalled' }, apiKey: key })).body.data.id;
});
afterAll(async () => {
  await app?.stop();
  relay?.close();
});

/** How long `request` took, and what it answered, or 'still waiting' after `limitMs`. */
async function timed<T>(request: Promise<T>, limitMs: number) {
  const startedAt = Date.now();
  const answer = await Promise.race([request, new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), limitMs))]);
  return { answer, elapsedMs: Date.now() - startedAt };
}

describe('a statement that waits on a lock held elsewhere', () => {
  it('is cancelled at the bound: 503 with Retry-After, the row unchanged, and the same change passes once the lock is gone', async () => {
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from projects where id = $1 for update', [projectId]);
      const rename = call(app.url, `/api/projects/${projectId}`, { method: 'PATCH', body: { name: 'Renamed' }, apiKey: key });
      await untilLockWaiters(app.database.ownerUrl);
      const { answer, elapsedMs } = await timed(rename, 10_000);
      expect(answer).not.toBe('still waiting');
      const response = answer as Awaited<typeof rename>;
      expect(response.status).toBe(503);
      expect(response.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'The database did not answer in time; try again shortly' });
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(elapsedMs).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 100);
      await holder.query('commit');
    } finally {
      await holder.end();
    }
    expect((await ownerQuery(app.database.ownerUrl, 'select name from projects where id = $1', [projectId]))[0].name).toBe('Stalled');
    const retried = await call(app.url, `/api/projects/${projectId}`, { method: 'PATCH', body: { name: 'Renamed' }, apiKey: key });
    expect(retried.status).toBe(200);
    expect(retried.body.data.name).toBe('Renamed');
    const logged = app.logLines.filter((line) => line.msg === 'database too slow: a statement outlasted DATABASE_STATEMENT_TIMEOUT_MS');
    expect(logged.length).toBeGreaterThanOrEqual(1);
  });
});

describe('a request on a connection whose database went silent', () => {
  it('is given up at the bound (503, connection dropped), and requests pass again once the database answers', async () => {
    relay.freeze();
    const read = call(app.url, `/api/projects/${projectId}`, { apiKey: key });
    await relay.stalledQuery;
    const { answer } = await timed(read, 8_000);
    expect(answer).not.toBe('still waiting');
    const response = answer as Awaited<typeof read>;
    expect(response.status).toBe(503);
    expect(response.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);

    relay.thaw();
    // The wedged connections were dropped, not handed to the next request: new ones answer.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const again = await call(app.url, `/api/projects/${projectId}`, { apiKey: key });
      expect(again.status).toBe(200);
    }
  });
});
