import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * HTTP requires a 401 to say how to authenticate (RFC 9110 §15.5.2: WWW-Authenticate with a
 * challenge); HTTP clients that answer a challenge, and proxies, read it. Every 401 carries one,
 * whoever refused the call, on both surfaces, and the document says so.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

const challengeOf = (response: { status: number; headers: Headers }) => [response.status, response.headers.get('www-authenticate')];
const CHALLENGED = [401, 'Bearer realm="specwright"'];

describe('a 401', () => {
  it('carries a WWW-Authenticate challenge, on REST and tRPC alike', async () => {
    const { organizationId } = app.bootstrap;
    const answers = {
      'no credentials': await call(app.url, '/api/me'),
      'an unknown API key': await call(app.url, '/api/me', { apiKey: 'swk_nope_nope' }),
      'a bearer token that is no token': await call(app.url, '/api/projects', { headers: { authorization: 'Bearer not-a-token' } }),
      'a wrong password': await call(app.url, '/api/auth/login', { body: { email: 'nobody@example.test', password: 'not the password' } }),
      'an upload without credentials': await call(app.url, `/api/${organizationId}/kits`, { body: { manifest: {}, files: {} } }),
      'a tRPC call without credentials': await call(app.url, '/trpc/me.get'),
    };
    expect(Object.fromEntries(Object.entries(answers).map(([label, response]) => [label, challengeOf(response)]))).toEqual(
      Object.fromEntries(Object.keys(answers).map((label) => [label, CHALLENGED])),
    );
  });

  it('is the only answer that carries one', async () => {
    const badTenant = await call(app.url, '/api/me', { apiKey: app.bootstrap.apiKey, headers: { 'x-tenant-id': 'not-a-uuid' } });
    const notFound = await call(app.url, '/api/no-such-route', { apiKey: app.bootstrap.apiKey });
    expect([challengeOf(badTenant), challengeOf(notFound)]).toEqual([
      [400, null],
      [404, null],
    ]);
  });

  it('is documented with its challenge on every operation that can answer it', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const undocumented: string[] = [];
    for (const [template, operations] of Object.entries(document.paths as Record<string, Record<string, { responses: Record<string, { headers?: Record<string, { required?: boolean }> }> }>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const unauthorized = operation.responses['401'];
        if (unauthorized && unauthorized.headers?.['WWW-Authenticate']?.required !== true) undocumented.push(`${method} ${template}`);
      }
    }
    expect(undocumented).toEqual([]);
    expect(document.paths['/me'].get.responses['401']).toBeDefined();
  });
});
