import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
let orgId: string;

beforeAll(async () => {
  app = await startTestApp();
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

/** The URL of every request log line. */
const loggedUrls = () => app.logLines.map((line) => (line.req as { url?: string } | undefined)?.url).filter((url): url is string => typeof url === 'string');

describe('a secret pasted where an id belongs in a request path', () => {
  it('is not written to the log: an API key, a bearer token, an invitation token on a misspelt route', async () => {
    const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const bearer = `${base64url({ alg: 'HS256', typ: 'at+jwt' })}.${base64url({ sub: 'someone', exp: 2e9 })}.${randomBytes(32).toString('base64url')}`;
    const invited = await call(app.url, '/api/customer-invitations', { apiKey: key, body: { organizationId: orgId, email: 'pasted@invitee.test' } });
    expect(invited.status, invited.text).toBe(201);
    const invitationToken: string = invited.body.data.token;

    // Revoking "my key" with the key itself in place of its id; the key, a token and an invitation
    // token where no route reads them.
    expect((await call(app.url, `/api/developer/api-keys/${key}`, { method: 'DELETE', apiKey: key })).status).toBe(400);
    expect((await call(app.url, `/api/${key}`, { apiKey: key })).status).toBe(404);
    expect((await call(app.url, `/trpc/${encodeURIComponent(key)}`, { apiKey: key })).status).toBe(404);
    expect((await call(app.url, `/api/projects/${bearer}`, { apiKey: key })).status).toBe(400);
    expect((await call(app.url, `/api/customer-invitation/${invitationToken}`)).status).toBe(404);

    // The key's secret is what follows `swk_<prefix>_`; it is base64url, so it may hold `_` itself
    // (cut at its last one, a short tail such as "a" turned up in every log line now and then).
    const keySecret = key.slice(key.indexOf('_', 'swk_'.length) + 1);
    expect(keySecret).toHaveLength(43);
    for (const secret of [key, keySecret, bearer, invitationToken]) {
      expect(app.rawLog.filter((line) => line.includes(secret))).toEqual([]);
    }
    expect(loggedUrls()).toEqual(
      expect.arrayContaining([
        '/api/developer/api-keys/[redacted]',
        '/api/[redacted]',
        '/trpc/[redacted]',
        '/api/projects/[redacted]',
        '/api/customer-invitation/[redacted]',
      ]),
    );
  });

  it('leaves the ids the API names readable in the log', async () => {
    const project = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Logged ids' } });
    const projectId: string = project.body.data.id;
    expect((await call(app.url, `/api/projects/${projectId}`, { apiKey: key })).status).toBe(200);
    expect((await call(app.url, `/api/${orgId}/kits/a-kit-id-of-many-words-that-runs-past-43-characters`, { apiKey: key })).status).toBe(404);
    expect(loggedUrls()).toEqual(
      expect.arrayContaining([`/api/projects/${projectId}`, `/api/${orgId}/kits/a-kit-id-of-many-words-that-runs-past-43-characters`]),
    );
  });
});
