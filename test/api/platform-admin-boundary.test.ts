import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../control-plane/domains/users/password-hash.ts';
import { call, type ApiResponse } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';

const JWT_SECRET = 'a-shared-jwt-secret-for-tests-0123456789abcdef';
const PASSWORD = 'a-long-enough-password-42';

let app: TestApp;
let other: Actor & { tenantId: string; organizationId: string };
let plain: Actor;
let credentialsOfPlain: Record<string, Record<string, string>>;

const query = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const outcome = (response: ApiResponse) => `${response.status} ${response.body?.error?.code ?? 'ok'}`;
const adminRoutes = (headers: Record<string, string>, tag: string) => ({
  create: () => call(app.url, '/api/admin/tenants', { headers, body: { name: 'Sneaky', ownerEmail: `sneaky-${tag}@boundary.test` } }),
  features: () => call(app.url, `/api/admin/tenants/${other.tenantId}/features`, { method: 'PATCH', headers, body: { kits_enabled: true } }),
  ownerKey: () => call(app.url, `/api/admin/tenants/${other.tenantId}/owner-key`, { method: 'POST', headers }),
  rotate: () => call(app.url, '/api/admin/credential-keys/rotate', { method: 'POST', headers }),
  trpcCreate: () => call(app.url, '/trpc/admin.createTenant', { headers, body: { name: 'Sneaky', ownerEmail: `sneaky-trpc-${tag}@boundary.test` } }),
});

beforeAll(async () => {
  app = await startTestApp({ env: { JWT_SECRET, E2E_TEST_MODE: 'true' } });
  other = await createTenant(app, 'Boundary');
  plain = await createUserInTenant(app, (sql, values) => query(sql, values), app.bootstrap.tenantId, 'Plain');
  await query('update users set password_hash = $1 where id = $2', [await hashPassword(PASSWORD), plain.userId]);
  const session = (await call(app.url, '/api/auth/login', { body: { email: plain.email, password: PASSWORD } })).body.data.accessToken;
  const idpToken = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(plain.userId).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(JWT_SECRET));
  credentialsOfPlain = {
    apiKey: { 'x-api-key': plain.apiKey },
    sessionToken: { authorization: `Bearer ${session}` },
    idpToken: { authorization: `Bearer ${idpToken}` },
  };
});
afterAll(() => app?.stop());

const tenantCount = () => countRows(app.database.ownerUrl, 'tenants');

describe('admin routes', () => {
  it('refuse everyone but a platform admin, whatever the credential, on both surfaces, and change nothing', async () => {
    const tenantsBefore = await tenantCount();
    const kinds = { ...credentialsOfPlain, e2eTestMode: { 'x-e2e-test-mode': 'true' } };
    const seen: Record<string, string> = {};
    for (const [kind, headers] of Object.entries(kinds)) {
      for (const [route, send] of Object.entries(adminRoutes(headers, kind))) seen[`${kind} ${route}`] = outcome(await send());
    }
    expect(Object.entries(seen).filter(([, got]) => got !== '403 FORBIDDEN' && got !== '403 -32003')).toEqual([]);
    expect(await tenantCount()).toBe(tenantsBefore);
    expect((await query('select features from tenants where id = $1', [other.tenantId]))[0].features).toEqual({ kits_enabled: false });
    expect(await query('select name, revoked_at from api_keys where user_id = $1', [other.userId])).toEqual([{ name: 'Owner key', revoked_at: null }]);
  });

  it('are not opened by X-Tenant-ID naming the admin tenant, and E2E test mode never acts in another tenant', async () => {
    const naming = { 'x-tenant-id': app.bootstrap.tenantId.toUpperCase() };
    const fromPlain = await adminRoutes({ ...credentialsOfPlain.apiKey!, ...naming }, 'naming').create();
    expect(outcome(fromPlain)).toBe('403 FORBIDDEN');
    const e2e = await call(app.url, '/api/me', { headers: { 'x-e2e-test-mode': 'true', 'x-tenant-id': other.tenantId } });
    expect(outcome(e2e)).toBe('403 FORBIDDEN');
  });
});

describe('a platform-admin flag the owner role removes', () => {
  it('stops counting on the very next request, for API keys and for session tokens issued while it was set', async () => {
    await query('update users set is_platform_admin = true where id = $1', [plain.userId]);
    try {
      const before = {
        apiKey: outcome(await call(app.url, '/api/me', { headers: { ...credentialsOfPlain.apiKey!, 'x-tenant-id': other.tenantId } })),
        sessionToken: outcome(await adminRoutes(credentialsOfPlain.sessionToken!, 'granted').rotate()),
      };
      expect(before).toEqual({ apiKey: '200 ok', sessionToken: '202 ok' });
    } finally {
      await query('update users set is_platform_admin = false where id = $1', [plain.userId]);
    }
    const after = {
      apiKeyActing: outcome(await call(app.url, '/api/me', { headers: { ...credentialsOfPlain.apiKey!, 'x-tenant-id': other.tenantId } })),
      sessionTokenRotate: outcome(await adminRoutes(credentialsOfPlain.sessionToken!, 'removed').rotate()),
      idpTokenCreate: outcome(await adminRoutes(credentialsOfPlain.idpToken!, 'removed').create()),
    };
    expect(after).toEqual({ apiKeyActing: '403 FORBIDDEN', sessionTokenRotate: '403 FORBIDDEN', idpTokenCreate: '403 FORBIDDEN' });
  });
});

describe('PATCH /api/admin/tenants/{tenantId}/features', () => {
  it('refuses unknown flags and values that are not booleans, changing nothing; a tenant that does not exist is NOT_FOUND', async () => {
    const path = `/api/admin/tenants/${other.tenantId}/features`;
    const admin = app.bootstrap.apiKey;
    for (const body of [{ search_enabled: true }, { kits_enabled: 'true' }, { kits_enabled: 1 }, { kits_enabled: null }]) {
      const response = await call(app.url, path, { method: 'PATCH', apiKey: admin, body });
      expect([JSON.stringify(body), outcome(response)]).toEqual([JSON.stringify(body), '400 VALIDATION_ERROR']);
    }
    expect((await query('select features from tenants where id = $1', [other.tenantId]))[0].features).toEqual({ kits_enabled: false });
    const missing = await call(app.url, '/api/admin/tenants/00000000-0000-4000-8000-000000000000/features', { method: 'PATCH', apiKey: admin, body: { kits_enabled: true } });
    expect(outcome(missing)).toBe('404 NOT_FOUND');
    const capitals = await call(app.url, `/api/admin/tenants/${other.tenantId.toUpperCase()}/features`, { method: 'PATCH', apiKey: admin, body: {} });
    expect([capitals.status, capitals.body.data]).toEqual([200, { tenantId: other.tenantId, features: { kits_enabled: false } }]);
  });
});

describe('POST /api/admin/tenants', () => {
  it('gives one of several creates racing for one owner email the tenant, the others CONFLICT, leaving one tenant and one user', async () => {
    const email = `race-${Date.now()}@boundary.test`;
    const answers = await Promise.all([1, 2, 3].map((n) => call(app.url, '/api/admin/tenants', { apiKey: app.bootstrap.apiKey, body: { name: `Race ${n}`, ownerEmail: n === 2 ? email.toUpperCase() : email } })));
    expect(answers.map(outcome).sort()).toEqual(['201 ok', '409 CONFLICT', '409 CONFLICT']);
    expect(await countRows(app.database.ownerUrl, "tenants where name like 'Race %'")).toBe(1);
    expect(await countRows(app.database.ownerUrl, 'users where lower(email) = $1', [email])).toBe(1);
  });

  it("answers the owner's first key once: its list shows only the prefix, and it acts as the owner, not as an admin", async () => {
    const created = await call(app.url, '/api/admin/tenants', { apiKey: app.bootstrap.apiKey, body: { name: 'Keyed', ownerEmail: `keyed-${Date.now()}@boundary.test` } });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { apiKey, userId, tenantId } = created.body.data;
    const listed = await call(app.url, '/api/developer/api-keys', { apiKey });
    expect(listed.body.data.apiKeys).toEqual([expect.objectContaining({ name: 'Owner key', prefix: apiKey.split('_').slice(0, 2).join('_') })]);
    expect(listed.text).not.toContain(apiKey);
    expect(app.rawLog.some((line) => line.includes(apiKey))).toBe(false);
    const me = await call(app.url, '/api/me', { apiKey });
    expect(me.body.data).toMatchObject({ userId, tenantId, homeTenantId: tenantId, isPlatformAdmin: false });
    expect(outcome(await call(app.url, '/api/admin/credential-keys/rotate', { method: 'POST', apiKey }))).toBe('403 FORBIDDEN');
  });
});

describe('a platform admin acting in another tenant', () => {
  it("spends the admin's own rate budget, not the tenant owner's", async () => {
    const remaining = (response: ApiResponse) => Number(response.headers.get('x-ratelimit-remaining'));
    const ownerBefore = remaining(await call(app.url, '/api/me', { apiKey: other.apiKey }));
    const adminFirst = remaining(await call(app.url, '/api/me', { apiKey: app.bootstrap.apiKey, headers: { 'x-tenant-id': other.tenantId } }));
    const adminSecond = remaining(await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, headers: { 'x-tenant-id': other.tenantId } }));
    const ownerAfter = remaining(await call(app.url, '/api/me', { apiKey: other.apiKey }));
    expect([adminFirst - adminSecond, ownerBefore - ownerAfter]).toEqual([1, 1]);
  });

  it('reaches no organization of that tenant: members, invitations, assignments and kits answer ORG_NOT_MEMBER and change nothing', async () => {
    await call(app.url, `/api/admin/tenants/${other.tenantId}/features`, { method: 'PATCH', apiKey: app.bootstrap.apiKey, body: { kits_enabled: true } });
    const membersBefore = await query('select user_id, role from organization_members where tenant_id = $1 order by user_id', [other.tenantId]);
    const headers = { 'x-tenant-id': other.tenantId };
    const admin = app.bootstrap.apiKey;
    const orgId = other.organizationId;
    const attempts = {
      addSelf: await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: admin, headers, body: { userId: app.bootstrap.userId, role: 'owner' } }),
      promoteOwner: await call(app.url, `/api/organizations/${orgId}/members/${other.userId}`, { method: 'PUT', apiKey: admin, headers, body: { role: 'member' } }),
      invite: await call(app.url, '/api/customer-invitations', { apiKey: admin, headers, body: { organizationId: orgId, email: 'planted@boundary.test' } }),
      assignments: await call(app.url, `/api/agency-projects?organizationId=${orgId}`, { apiKey: admin, headers }),
      kits: await call(app.url, `/api/${orgId}/kits`, { apiKey: admin, headers }),
      rename: await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: admin, headers, body: { name: 'Taken over' } }),
    };
    expect(Object.fromEntries(Object.entries(attempts).map(([name, response]) => [name, outcome(response)]))).toEqual({
      addSelf: '403 ORG_NOT_MEMBER',
      promoteOwner: '403 ORG_NOT_MEMBER',
      invite: '403 ORG_NOT_MEMBER',
      assignments: '403 ORG_NOT_MEMBER',
      kits: '403 ORG_NOT_MEMBER',
      rename: '403 ORG_NOT_MEMBER',
    });
    expect(await query('select user_id, role from organization_members where tenant_id = $1 order by user_id', [other.tenantId])).toEqual(membersBefore);
    expect(await countRows(app.database.ownerUrl, "customer_invitations where email = 'planted@boundary.test'")).toBe(0);
  });
});
