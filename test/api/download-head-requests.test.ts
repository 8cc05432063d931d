import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledExecution } from '../helpers/bundled-execution.ts';
import { startDatabaseRelay, type DatabaseRelay } from '../helpers/database-relay.ts';
import { call } from '../helpers/http.ts';
import { lockTableUntilReleased } from '../helpers/table-lock-gate.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

/** Random, so PostgreSQL cannot compress it: stored out of line, as a real ZIP is. */
const BUNDLE_BYTES = 6 * 1024 * 1024;

let app: TestApp;
let relay: DatabaseRelay;
let link: string;

beforeAll(async () => {
  const database = await createTestDatabase();
  // The requests' connections (the app role's) pass through the relay; the test's own do not.
  relay = await startDatabaseRelay(new URL(database.appUrl));
  app = await startTestApp({ database, env: { APP_DATABASE_URL: relay.urlFor(database.appUrl) } });
  const executionId = await bundledExecution(app, randomBytes(BUNDLE_BYTES));
  const handed = await call(app.url, `/api/${app.bootstrap.organizationId}/kits/executions/${executionId}/bundle`, { apiKey: app.bootstrap.apiKey });
  expect(handed.status, handed.text).toBe(200);
  link = handed.body.data.downloadUrl;
});
afterAll(async () => {
  await app?.stop();
  relay?.close();
});

/** One request from a given client address; a HEAD's answer has no body to read. */
const ask = (method: 'GET' | 'HEAD', from: string) =>
  new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
    request(new URL(link, app.url), { method, localAddress: from }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, retryAfter: response.headers['retry-after'] }));
    })
      .on('error', reject)
      .end();
  });

/** Headers that differ from one answer to the next whatever was asked. */
const PER_ANSWER = new Set(['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'keep-alive', 'connection']);
const lastingHeaders = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => !PER_ANSWER.has(name)));

describe('HEAD /api/downloads/<token>', () => {
  it('answers the status and headers GET does, with no body', async () => {
    const get = await call(app.url, link);
    const head = await call(app.url, link, { method: 'HEAD' });
    expect(get.status).toBe(200);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('x-request-id')).toBeTruthy();
    expect(lastingHeaders(head.headers)).toEqual(lastingHeaders(get.headers));
    expect(lastingHeaders(head.headers)).toMatchObject({
      'content-length': String(BUNDLE_BYTES),
      'content-type': 'application/zip',
      'content-disposition': expect.stringMatching(/^attachment; filename="[A-Za-z0-9._-]+\.zip"$/),
      digest: expect.stringMatching(/^sha-256=/),
      'cache-control': 'private, no-store',
    });
  });

  it('reads what the headers need from the database, not the bundle it describes', async () => {
    const readFor = async (method: 'GET' | 'HEAD') => {
      const before = relay.bytesFromDatabase;
      const answer = await call(app.url, link, { method });
      expect(answer.status).toBe(200);
      return relay.bytesFromDatabase - before;
    };
    // The relay sees a GET read the whole bundle...
    expect(await readFor('GET')).toBeGreaterThan(BUNDLE_BYTES);
    // ...and a HEAD read a few rows (authorization, rate count, the blob's length), nothing near it.
    expect(await readFor('HEAD')).toBeLessThan(64 * 1024);
  });

  it('answers a link that is not valid, or no longer serves its holder, as GET does', async () => {
    const forged = `${link.slice(0, -3)}abc`;
    for (const method of ['GET', 'HEAD'] as const) {
      const answer = await call(app.url, forged, { method });
      expect([method, answer.status, answer.headers.get('content-type')]).toEqual([method, 403, 'application/json; charset=utf-8']);
    }
    const switchKits = (enabled: boolean) => call(app.url, `/api/admin/tenants/${app.bootstrap.tenantId}/features`, { apiKey: app.bootstrap.apiKey, method: 'PATCH', body: { kits_enabled: enabled } });
    expect((await switchKits(false)).status).toBe(200);
    try {
      expect((await call(app.url, link, { method: 'HEAD' })).status).toBe(403);
    } finally {
      expect((await switchKits(true)).status).toBe(200);
    }
    expect((await call(app.url, link, { method: 'HEAD' })).status).toBe(200);
  });

  it('is in the OpenAPI document beside GET, listing the statuses it answers and no body', async () => {
    const document = (await call(app.url, '/api/openapi.json')).body;
    const [get, head] = [document.paths['/downloads/{token}'].get, document.paths['/downloads/{token}'].head];
    expect(head).toMatchObject({ operationId: 'downloads-head', tags: get.tags, parameters: get.parameters });
    // GET's statuses but those of a Range, which a HEAD does not look at.
    expect(Object.keys(head.responses).sort()).toEqual(Object.keys(get.responses).filter((status) => !['206', '416'].includes(status)).sort());
    expect(Object.values(head.responses).filter((response: any) => response.content !== undefined)).toEqual([]);
    expect(head.responses['429'].headers['Retry-After'].required).toBe(true);
    const answered = [
      await call(app.url, link, { method: 'HEAD' }),
      await call(app.url, link, { method: 'HEAD', headers: { range: 'bytes=0-1' } }),
      await call(app.url, `${link.slice(0, -3)}abc`, { method: 'HEAD' }),
      await call(app.url, `${link}?notAParameter=1`, { method: 'HEAD' }),
    ];
    expect(answered.map((answer) => answer.status)).toEqual([200, 200, 403, 400]);
    for (const answer of answered) expect(head.responses[String(answer.status)]).toBeDefined();
  });

  it('holds a download slot while it reads, as GET does, and gives it back once answered', async () => {
    const from = '127.0.0.2';
    // Both HEADs wait on the blob table meanwhile, each holding one of the address's two slots.
    const blobs = await lockTableUntilReleased(app.database.ownerUrl, 'blobs');
    let held: Array<Promise<{ status: number }>> = [];
    try {
      held = [ask('HEAD', from), ask('HEAD', from)];
      await blobs.untilWaitedOn('both HEADs read the blob', 10_000, 2);
      await sleep(100);
      expect(await ask('HEAD', from)).toEqual({ status: 429, retryAfter: '1' });
      expect(await ask('GET', from)).toEqual({ status: 429, retryAfter: '1' });
    } finally {
      await blobs.release();
    }
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([200, 200]);
    // Every HEAD answered gave its slot back: a leak would refuse the third of these.
    for (let i = 0; i < 4; i += 1) expect(await ask('HEAD', from)).toEqual({ status: 200, retryAfter: undefined });
    expect((await ask('GET', from)).status).toBe(200);
  });
});
