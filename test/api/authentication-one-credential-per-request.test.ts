import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ApiResponse } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A request authenticates with one credential. An X-API-Key and an `Authorization: Bearer` token
 * together may name two users, and acting as either would be a guess the caller never sees (it
 * used to be the key, silently): such a request is refused, whichever of the two is good. An
 * Authorization header of another scheme (a proxy's Basic) is not a credential of ours and is left
 * alone. An API key sent as a bearer token is told where it belongs.
 */
const JWT_SECRET = 'a-shared-jwt-secret-for-one-credential-tests-0123';
const TWO_CREDENTIALS = 'Send one credential: X-API-Key or Authorization: Bearer, not both';

let app: TestApp;
let other: Awaited<ReturnType<typeof createTenant>>;
beforeAll(async () => {
  app = await startTestApp({ env: { JWT_SECRET } });
  other = await createTenant(app, 'Two credentials');
});
afterAll(() => app?.stop());

const idpToken = (userId: string) =>
  new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(userId).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(JWT_SECRET));
const refusal = (response: ApiResponse) => [response.status, response.body?.error?.code ?? response.body?.error?.data?.code, response.body?.error?.message, response.headers.get('www-authenticate')];
const lastUsedOf = async (userId: string) => (await ownerQuery(app.database.ownerUrl, 'select last_used_at from api_keys where user_id = $1', [userId])).map((row) => row.last_used_at);

describe('a request with an X-API-Key and a bearer token', () => {
  it("is refused with 401 and a challenge when they name two users, acting as neither and leaving the key's use unrecorded", async () => {
    const token = await idpToken(app.bootstrap.userId);
    const answers = {
      rest: await call(app.url, '/api/me', { apiKey: other.apiKey, headers: { authorization: `Bearer ${token}` } }),
      restAdminRoute: await call(app.url, '/api/admin/tenants', { apiKey: other.apiKey, headers: { authorization: `Bearer ${token}` }, body: { name: 'Via token', ownerEmail: `via-token-${Date.now()}@two.test` } }),
    };
    for (const [label, response] of Object.entries(answers)) {
      expect([label, ...refusal(response)]).toEqual([label, 401, 'UNAUTHORIZED', TWO_CREDENTIALS, 'Bearer realm="specwright"']);
    }
    const trpc = await call(app.url, '/trpc/me.get', { apiKey: other.apiKey, headers: { authorization: `Bearer ${token}` } });
    expect([trpc.status, trpc.body.error?.message, trpc.headers.get('www-authenticate')]).toEqual([401, TWO_CREDENTIALS, 'Bearer realm="specwright"']);
    expect(await ownerQuery(app.database.ownerUrl, "select count(*)::int as n from tenants where name = 'Via token'")).toEqual([{ n: 0 }]);
    expect(await lastUsedOf(other.userId)).toEqual([null]);
  });

  it('is refused the same whichever of the two is good, and in any letter case of the scheme', async () => {
    const token = await idpToken(other.userId);
    const cases = {
      goodKeyBadToken: await call(app.url, '/api/me', { apiKey: other.apiKey, headers: { authorization: 'Bearer not-a-token' } }),
      badKeyGoodToken: await call(app.url, '/api/me', { apiKey: 'swk_nope', headers: { authorization: `Bearer ${token}` } }),
      bothGoodSameUser: await call(app.url, '/api/me', { apiKey: other.apiKey, headers: { authorization: `bearer ${token}` } }),
      emptyBearer: await call(app.url, '/api/me', { apiKey: other.apiKey, headers: { authorization: 'Bearer' } }),
    };
    expect(Object.fromEntries(Object.entries(cases).map(([label, response]) => [label, refusal(response)]))).toEqual(
      Object.fromEntries(Object.keys(cases).map((label) => [label, [401, 'UNAUTHORIZED', TWO_CREDENTIALS, 'Bearer realm="specwright"']])),
    );
    expect(await lastUsedOf(other.userId)).toEqual([null]);
  });

  it("leaves an Authorization header of another scheme (a proxy's Basic) alone: the key authenticates", async () => {
    const response = await call(app.url, '/api/me', { apiKey: other.apiKey, headers: { authorization: 'Basic cHJveHk6cGFzcw==' } });
    expect([response.status, response.body.data?.userId, response.body.data?.authenticatedBy]).toEqual([200, other.userId, 'api_key']);
  });

  it('leaves public routes public', async () => {
    const health = await call(app.url, '/api/health', { apiKey: other.apiKey, headers: { authorization: 'Bearer not-a-token' } });
    expect(health.status).toBe(200);
  });
});

describe('an API key sent as a bearer token', () => {
  it('is refused with a message that says where it belongs', async () => {
    const response = await call(app.url, '/api/me', { headers: { authorization: `Bearer ${app.bootstrap.apiKey}` } });
    expect(refusal(response)).toEqual([401, 'UNAUTHORIZED', 'An API key is sent in the X-API-Key header, not as a bearer token', 'Bearer realm="specwright"']);
  });
});
