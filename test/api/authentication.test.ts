import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { lockWaiterCount } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant } from '../helpers/tenant-fixtures.ts';

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

const JWT_SECRET = 'a-shared-jwt-secret-for-tests-0123456789abcdef';
const secretKey = new TextEncoder().encode(JWT_SECRET);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { JWT_SECRET, JWT_ISSUER: 'https://idp.test', JWT_AUDIENCE: 'specwright' } });
});
afterAll(() => app?.stop());

const hsToken = (claims: { sub?: string; aud?: string; iss?: string; exp?: number | string }) => {
  const jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (claims.sub) jwt.setSubject(claims.sub);
  jwt.setIssuer(claims.iss ?? 'https://idp.test').setAudience(claims.aud ?? 'specwright').setExpirationTime(claims.exp ?? '5m');
  return jwt.sign(secretKey);
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('API keys', () => {
  it('rejects a request without credentials with UNAUTHORIZED', async () => {
    const response = await call(app.url, '/api/me');
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('UNAUTHORIZED');
  });

  it('rejects unknown, malformed and tampered keys alike', async () => {
    const tampered = `${app.bootstrap.apiKey.slice(0, -2)}xx`;
    for (const apiKey of ['nope', 'swk_aaaaaaaaaaaa_' + 'a'.repeat(43), tampered]) {
      const response = await call(app.url, '/api/me', { apiKey });
      expect(response.status).toBe(401);
      expect(response.body.error).toEqual({ code: 'UNAUTHORIZED', message: 'The API key is not valid' });
    }
  });

  it('stores only a hash and a readable prefix, and fails at once after revocation', async () => {
    const created = await call(app.url, '/api/developer/api-keys', { apiKey: app.bootstrap.apiKey, body: { name: 'laptop' } });
    const { key, id, prefix } = created.body.data;
    expect(key.startsWith(`${prefix}_`)).toBe(true);
    const [row] = await ownerQuery(app.database.ownerUrl, 'select * from api_keys where id = $1', [id]);
    expect(Object.values(row).map(String)).not.toContain(key);
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);

    expect((await call(app.url, '/api/me', { apiKey: key })).status).toBe(200);
    const listed = await call(app.url, '/api/developer/api-keys', { apiKey: app.bootstrap.apiKey });
    expect(listed.text).not.toContain(key);
    expect(listed.body.data.apiKeys.map((k: { id: string }) => k.id)).toContain(id);

    const revoked = await call(app.url, `/api/developer/api-keys/${id}`, { method: 'DELETE', apiKey: app.bootstrap.apiKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revokedAt).not.toBeNull();
    const after = await call(app.url, '/api/me', { apiKey: key });
    expect(after.status).toBe(401);
    expect(after.body.error.message).toBe('The API key has been revoked');
  });

  it('are at most 50 per user that are not revoked, also when created at the same moment; revoking one makes room', async () => {
    const user = await createTenant(app, 'Key minter');
    const create = () => call(app.url, '/api/developer/api-keys', { apiKey: user.apiKey, body: { name: 'minted' } });
    const active = () => countRows(app.database.ownerUrl, 'api_keys where user_id = $1 and revoked_at is null', [user.userId]);
    const held = await active();
    const answers = await Promise.all(Array.from({ length: 60 - held }, create));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(50 - held);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(10);
    for (const answer of refused) expect([answer.status, answer.body.error.code, answer.body.error.details]).toEqual([409, 'CONFLICT', { maxActiveKeys: 50 }]);
    expect(await active()).toBe(50);
    const someKey = answers.find((a) => a.status === 201)!.body.data.id;
    expect((await call(app.url, `/api/developer/api-keys/${someKey}`, { method: 'DELETE', apiKey: user.apiKey })).status).toBe(200);
    expect((await create()).status).toBe(201);
  });

  it('are created without waiting for a transaction that is adding a row referencing their user (a membership)', async () => {
    const user = await createUserInTenant(app, (text, values) => ownerQuery(app.database.ownerUrl, text, values), app.bootstrap.tenantId, 'Kim');
    // An admin's request adding the user to the organization, not committed yet.
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query("insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')", [app.bootstrap.tenantId, app.bootstrap.organizationId, user.userId]);
      let answered = false;
      const created = call(app.url, '/api/developer/api-keys', { apiKey: user.apiKey, body: { name: 'meanwhile' } }).finally(() => (answered = true));
      let waiting = false;
      while (!answered && !waiting) waiting = (await lockWaiterCount(app.database.ownerUrl)) > 0;
      expect(waiting, 'the key creation waits for the transaction adding the membership').toBe(false);
      expect((await created).status).toBe(201);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
  });

  it('refuses a key name with the NUL character, and fields that cannot be set, creating no key', async () => {
    const keysOfOwner = () => countRows(app.database.ownerUrl, 'api_keys where user_id = $1', [app.bootstrap.userId]);
    const before = await keysOfOwner();
    for (const [body, field] of [[{ name: 'ci\u0000' }, 'name'], [{ name: 'ci', expiresAt: '2030-01-01T00:00:00Z' }, 'expiresAt']] as const) {
      const response = await call(app.url, '/api/developer/api-keys', { apiKey: app.bootstrap.apiKey, body });
      expect([response.status, response.body.error?.code], JSON.stringify(body)).toEqual([400, 'VALIDATION_ERROR']);
      expect(response.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual([field]);
    }
    expect(await keysOfOwner()).toBe(before);
  });

  it("are the caller's own: a platform admin acting in another tenant (X-Tenant-ID) is refused instead of getting a key that lives there", async () => {
    const elsewhere = await createTenant(app, 'Elsewhere');
    const headers = { 'x-tenant-id': elsewhere.tenantId };
    const keysOfAdmin = async () => (await ownerQuery(app.database.ownerUrl, 'select tenant_id, revoked_at from api_keys where user_id = $1 order by created_at, id', [app.bootstrap.userId]));
    const before = await keysOfAdmin();
    const [ownKey] = (await call(app.url, '/api/developer/api-keys', { apiKey: app.bootstrap.apiKey })).body.data.apiKeys;
    const attempts = {
      create: await call(app.url, '/api/developer/api-keys', { apiKey: app.bootstrap.apiKey, headers, body: { name: 'elsewhere' } }),
      list: await call(app.url, '/api/developer/api-keys', { apiKey: app.bootstrap.apiKey, headers }),
      revoke: await call(app.url, `/api/developer/api-keys/${ownKey.id}`, { method: 'DELETE', apiKey: app.bootstrap.apiKey, headers }),
    };
    expect(Object.fromEntries(Object.entries(attempts).map(([name, r]) => [name, `${r.status} ${r.body.error?.code}`]))).toEqual({
      create: '403 FORBIDDEN',
      list: '403 FORBIDDEN',
      revoke: '403 FORBIDDEN',
    });
    expect(await keysOfAdmin()).toEqual(before);
    expect(before.every((key: { tenant_id: string }) => key.tenant_id === app.bootstrap.tenantId)).toBe(true);
  });

  it('never logs a key', async () => {
    await call(app.url, '/api/me', { apiKey: app.bootstrap.apiKey });
    expect(app.rawLog.join('\n')).not.toContain(app.bootstrap.apiKey);
  });

  it('logs no header value that may hold a credential, whatever its name, and keeps the ones that cannot', async () => {
    const credentials = { 'proxy-authorization': 'Basic cHJveHk6aHVudGVyMg==', 'x-auth-token': 'tok-7f3a9c1e55', 'x-amz-security-token': 'FQoGZXIvYXdzEJr' };
    await call(app.url, '/api/me', { apiKey: app.bootstrap.apiKey, headers: { ...credentials, 'user-agent': 'audit-agent/1.0', 'x-request-id': 'header-check-1' } });
    const line = app.logLines.find((entry) => (entry.req as { id?: string } | undefined)?.id === 'header-check-1');
    const headers = (line?.req as { headers: Record<string, string> }).headers;
    expect(Object.fromEntries(Object.keys(credentials).map((name) => [name, headers[name]]))).toEqual({
      'proxy-authorization': '[redacted]',
      'x-auth-token': '[redacted]',
      'x-amz-security-token': '[redacted]',
    });
    expect(headers).toMatchObject({ 'user-agent': 'audit-agent/1.0', 'x-request-id': 'header-check-1', 'x-api-key': '[redacted]' });
    for (const value of Object.values(credentials)) expect(app.rawLog.join('\n')).not.toContain(value);
  });
});

describe('JWT bearer tokens (shared secret)', () => {
  it('accepts a valid token for a known user', async () => {
    const response = await call(app.url, '/api/me', { headers: bearer(await hsToken({ sub: app.bootstrap.userId })) });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ userId: app.bootstrap.userId, authenticatedBy: 'jwt' });
  });

  it('refuses alg none, an expired token, a wrong audience or issuer, and an unknown subject', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ sub: app.bootstrap.userId, aud: 'specwright', iss: 'https://idp.test', exp: Math.floor(Date.now() / 1000) + 300 })).toString('base64url');
    const cases = [
      `${header}.${payload}.`,
      await hsToken({ sub: app.bootstrap.userId, exp: Math.floor(Date.now() / 1000) - 60 }),
      await hsToken({ sub: app.bootstrap.userId, aud: 'someone-else' }),
      await hsToken({ sub: app.bootstrap.userId, iss: 'https://evil.test' }),
      await hsToken({ sub: '00000000-0000-4000-8000-000000000000' }),
      'not.a.jwt',
    ];
    for (const token of cases) {
      const response = await call(app.url, '/api/me', { headers: bearer(token) });
      expect(response.status, token).toBe(401);
      expect(response.body.error.code).toBe('UNAUTHORIZED');
    }
    const expired = await call(app.url, '/api/me', { headers: bearer(cases[1]!) });
    expect(expired.body.error.message).toBe('The bearer token has expired');
  });

  it('refuses a token without an expiry, which would otherwise never expire', async () => {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(app.bootstrap.userId).setIssuer('https://idp.test').setAudience('specwright').setIssuedAt().sign(secretKey);
    const response = await call(app.url, '/api/me', { headers: bearer(token) });
    expect(response.status).toBe(401);
    expect(response.body.error).toEqual({ code: 'UNAUTHORIZED', message: 'The bearer token has no exp claim' });
  });

  it('refuses a malformed Authorization header', async () => {
    const response = await call(app.url, '/api/me', { headers: { authorization: 'Basic abc' } });
    expect(response.status).toBe(401);
  });
});

describe('JWT bearer tokens (JWKS)', () => {
  let jwks: Server;
  let jwksApp: TestApp;
  let privateKey: SigningKey;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const port = (jwks.address() as AddressInfo).port;
    jwksApp = await startTestApp({ env: { JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`, JWT_AUDIENCE: 'specwright' } });
  });
  afterAll(async () => {
    await jwksApp?.stop();
    jwks?.close();
  });

  it('warns at boot about an IdP claim it cannot check, and only then', () => {
    const warnings = (app: TestApp) => app.logLines.filter((line) => line.level === 40 && String(line.msg).includes('identity-provider tokens')).map((line) => line.unset);
    expect(warnings(jwksApp)).toEqual([['JWT_ISSUER']]);
    expect(warnings(app)).toEqual([]);
  });

  it('warns at boot when the key set is fetched over plain http from another host, naming only its origin', async () => {
    const inTheClear = (app: TestApp) => app.logLines.filter((line) => line.level === 40 && String(line.msg).startsWith('JWT_JWKS_URL is plain http'));
    // A key set on this machine (a local IdP, a test) is not on anyone's path.
    expect(inTheClear(jwksApp)).toEqual([]);
    const remote = await startTestApp({ env: { JWT_JWKS_URL: 'http://idp.example.test/keys/jwks.json?token=kept-out-of-the-log', JWT_ISSUER: 'https://idp.example.test', JWT_AUDIENCE: 'specwright' } });
    try {
      expect(inTheClear(remote)).toEqual([expect.objectContaining({ jwksOrigin: 'http://idp.example.test' })]);
      expect(remote.rawLog.join('\n')).not.toContain('kept-out-of-the-log');
    } finally {
      await remote.stop();
    }
  });

  it('verifies tokens against the key set and refuses other keys and HS256', async () => {
    const sign = (key: SigningKey, kid = 'k1') =>
      new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid }).setSubject(jwksApp.bootstrap.userId).setAudience('specwright').setIssuedAt().setExpirationTime('5m').sign(key);
    expect((await call(jwksApp.url, '/api/me', { headers: bearer(await sign(privateKey)) })).status).toBe(200);

    const stranger = await generateKeyPair('RS256');
    expect((await call(jwksApp.url, '/api/me', { headers: bearer(await sign(stranger.privateKey)) })).status).toBe(401);
    const hs = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(jwksApp.bootstrap.userId).setAudience('specwright').setIssuedAt().setExpirationTime('5m').sign(secretKey);
    const refused = await call(jwksApp.url, '/api/me', { headers: bearer(hs) });
    expect(refused.status).toBe(401);
  });
});

describe('JWT bearer tokens when the identity provider cannot be reached', () => {
  let jwks: Server;
  let jwksApp: TestApp;
  let privateKey: SigningKey;
  let answer: 'keys' | 'error' | 'garbage' | 'hang-up' = 'error';

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwks = createServer((_req, res) => {
      if (answer === 'keys') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
      else if (answer === 'garbage') res.writeHead(200, { 'content-type': 'application/json' }).end('<html>maintenance</html>');
      else if (answer === 'hang-up') res.socket?.destroy();
      else res.writeHead(502).end();
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const port = (jwks.address() as AddressInfo).port;
    jwksApp = await startTestApp({ env: { JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`, JWT_AUDIENCE: 'specwright', JWT_ISSUER: 'https://idp.test' } });
  });
  afterAll(async () => {
    await jwksApp?.stop();
    jwks?.close();
  });

  it('answers SERVICE_UNAVAILABLE, not UNAUTHORIZED: the token may be good, and signing in again would not help', async () => {
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject(jwksApp.bootstrap.userId).setIssuer('https://idp.test').setAudience('specwright').setIssuedAt().setExpirationTime('5m').sign(privateKey);
    for (const failure of ['error', 'garbage', 'hang-up'] as const) {
      answer = failure;
      const response = await call(jwksApp.url, '/api/me', { headers: bearer(token) });
      expect([response.status, response.body.error?.code, response.headers.get('retry-after')], failure).toEqual([503, 'SERVICE_UNAVAILABLE', '2']);
      expect(response.body.error.message).toBe("The identity provider's signing keys cannot be fetched; try again shortly");
    }
    // The operator reads what is away: the identity provider, not the database.
    const faults = jwksApp.logLines.filter((line) => (line.level as number) >= 40 && /unavailable|identity provider/.test(String(line.msg)));
    expect(faults.map((line) => [line.level, line.msg])).toEqual([
      [40, "answered SERVICE_UNAVAILABLE: The identity provider's signing keys cannot be fetched; try again shortly"],
      [40, "answered SERVICE_UNAVAILABLE: The identity provider's signing keys cannot be fetched; try again shortly"],
      [40, "answered SERVICE_UNAVAILABLE: The identity provider's signing keys cannot be fetched; try again shortly"],
    ]);
    answer = 'keys';
    expect((await call(jwksApp.url, '/api/me', { headers: bearer(token) })).status).toBe(200);
  });
});

describe('E2E test mode', () => {
  it('ignores X-E2E-Test-Mode unless the server was started with E2E_TEST_MODE=true', async () => {
    const response = await call(app.url, '/api/me', { headers: { 'x-e2e-test-mode': 'true' } });
    expect(response.status).toBe(401);
  });

  it('authenticates as the (non-admin) test user when enabled, and warns at start', async () => {
    const e2e = await startTestApp({ env: { E2E_TEST_MODE: 'true' } });
    try {
      expect(e2e.logLines.some((line) => line.level === 40 && String(line.msg).includes('E2E_TEST_MODE is on'))).toBe(true);
      const response = await call(e2e.url, '/api/me', { headers: { 'x-e2e-test-mode': 'true' } });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ email: 'e2e-test@specwright.local', isPlatformAdmin: false, authenticatedBy: 'e2e_test_mode' });
    } finally {
      await e2e.stop();
    }
  });
});
