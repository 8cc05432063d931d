import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { holdTableLock } from '../helpers/lock-holder.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A SERVICE_UNAVAILABLE is passing trouble, and its answer says when to try again (Retry-After) on
 * both surfaces, whether a procedure raised it or the request never reached one. Here a procedure
 * raises it: the credential key ring is locked (as behind a long migration) past the statement bound.
 */
let app: TestApp;
let orgId: string;
let releaseKeys: () => Promise<void>;
const publicKeyPath = () => `/api/${orgId}/kits/credentials/public-key`;

beforeAll(async () => {
  app = await startTestApp({ env: { DATABASE_STATEMENT_TIMEOUT_MS: '1000' } });
  orgId = app.bootstrap.organizationId;
  releaseKeys = await holdTableLock(app.database.ownerUrl, 'credential_keys');
});
afterAll(async () => {
  await releaseKeys?.();
  await app?.stop();
});

describe('a SERVICE_UNAVAILABLE answer', () => {
  it('carries Retry-After over REST', async () => {
    const response = await call(app.url, publicKeyPath(), { apiKey: app.bootstrap.apiKey });
    expect([response.status, response.body.error?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    expect(response.headers.get('retry-after')).toBe('2');
  });

  it('carries Retry-After over tRPC, for one call and for a batch that holds one', async () => {
    const input = encodeURIComponent(JSON.stringify({ orgId }));
    const single = await call(app.url, `/trpc/kitCredentials.publicKey?input=${input}`, { apiKey: app.bootstrap.apiKey });
    expect([single.status, single.body.error?.data?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    expect(single.headers.get('retry-after')).toBe('2');

    const batchInput = encodeURIComponent(JSON.stringify({ 0: { orgId } }));
    const batch = await call(app.url, `/trpc/kitCredentials.publicKey,me.get?batch=1&input=${batchInput}`, { apiKey: app.bootstrap.apiKey });
    expect(batch.status, batch.text).toBe(207);
    expect(batch.body[0].error.data.code).toBe('SERVICE_UNAVAILABLE');
    expect(batch.body[1].result).toBeDefined();
    expect(batch.headers.get('retry-after')).toBe('2');
  });

  it('is the only kind of failure that does: a caller mistake says nothing of retrying', async () => {
    const response = await call(app.url, '/api/projects/not-a-uuid', { apiKey: app.bootstrap.apiKey });
    expect(response.status).toBe(400);
    expect(response.headers.get('retry-after')).toBeNull();
  });
});
