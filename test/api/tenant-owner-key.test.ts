import { SignJWT } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../control-plane/domains/users/password-hash.ts';
import { markKeysIssuedWithTheirUser } from '../../migrations/0022_platform_issued_owner_keys.ts';
import { call, type ApiResponse } from '../helpers/http.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { ownerQuery, withOwnerKysely } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * POST /api/admin/tenants/{tenantId}/owner-key: when the answer to a tenant's creation (its owner's
 * only key; the owner has no password) is lost, a platform admin gets a new key for the owner, and
 * the lost one stops working. Only while the owner has done nothing themselves.
 */
const JWT_SECRET = 'a-shared-jwt-secret-for-owner-key-tests-0123456789';
const PASSWORD = 'a-long-enough-password-42';

let app: TestApp;
let admin: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const outcome = (response: ApiResponse) => `${response.status} ${response.body?.error?.code ?? 'ok'}`;
const reissue = (tenantId: string, apiKey = admin) => call(app.url, `/api/admin/tenants/${tenantId}/owner-key`, { method: 'POST', apiKey });
/** The owner's keys as stored: what a refusal must leave as it was. */
const keysOf = (userId: string) =>
  sqlAsOwner('select id, name, revoked_at, last_used_at, issued_by_platform from api_keys where user_id = $1 order by created_at, id', [userId]);
/** A tenant whose creation answer counts as lost: its owner's key is never sent here. */
const lostTenant = (name: string): Promise<Actor & { tenantId: string; organizationId: string }> => createTenant(app, name);

beforeAll(async () => {
  app = await startTestApp({ env: { JWT_SECRET } });
  admin = app.bootstrap.apiKey;
});
afterAll(() => app?.stop());

describe('POST /api/admin/tenants/{tenantId}/owner-key', () => {
  it('answers 201 with a new owner key shown once, which works, while the lost one answers 401 and is the one row revoked', async () => {
    const tenant = await lostTenant('Lost answer');
    const [lost] = await keysOf(tenant.userId);
    const response = await reissue(tenant.tenantId);
    expect(response.status, response.text).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const reissued = response.body.data;
    expect(reissued).toEqual({
      id: expect.any(String),
      name: 'Owner key (reissued)',
      prefix: reissued.key.split('_').slice(0, 2).join('_'),
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
      key: expect.stringMatching(/^swk_[a-z0-9]{12}_/),
      tenantId: tenant.tenantId,
      userId: tenant.userId,
    });

    const me = await call(app.url, '/api/me', { apiKey: reissued.key });
    expect([me.status, me.body.data?.userId, me.body.data?.tenantId, me.body.data?.isPlatformAdmin]).toEqual([200, tenant.userId, tenant.tenantId, false]);
    const old = await call(app.url, '/api/me', { apiKey: tenant.apiKey });
    expect([old.status, old.body.error?.message]).toEqual([401, 'The API key has been revoked']);

    const keys = await keysOf(tenant.userId);
    expect(keys.map((key) => [key.id, key.revoked_at !== null, key.issued_by_platform])).toEqual([
      [lost.id, true, true],
      [reissued.id, false, true],
    ]);
    // The key went to the caller only: one info line names the tenant and the admin, none holds the key.
    expect(app.rawLog.filter((line) => line.includes(reissued.key))).toEqual([]);
    const logged = app.logLines.filter((line) => line.msg === "a platform admin issued a new API key for a tenant's owner" && line.tenantId === tenant.tenantId);
    expect(logged).toEqual([expect.objectContaining({ level: 30, adminUserId: app.bootstrap.userId, ownerUserId: tenant.userId, apiKeyId: reissued.id, revokedApiKeyIds: [lost.id] })]);
  });

  it('is CONFLICT once the owner has used a key, and changes nothing', async () => {
    const tenant = await lostTenant('Used key');
    expect((await call(app.url, '/api/me', { apiKey: tenant.apiKey })).status).toBe(200);
    const before = await keysOf(tenant.userId);
    const response = await reissue(tenant.tenantId);
    expect([outcome(response), response.body.error?.message]).toEqual([
      '409 CONFLICT',
      'The owner of this tenant has already used an API key: they create API keys themselves (POST /developer/api-keys); no key was issued and none was revoked',
    ]);
    expect(await keysOf(tenant.userId)).toEqual(before);
    expect((await call(app.url, '/api/me', { apiKey: tenant.apiKey })).status).toBe(200);
  });

  it('is CONFLICT once the owner has a password, and changes nothing', async () => {
    // No API gives an existing owner a password today; an operator can (and a later route may).
    const tenant = await lostTenant('With password');
    await sqlAsOwner('update users set password_hash = $1 where id = $2', [await hashPassword(PASSWORD), tenant.userId]);
    expect((await call(app.url, '/api/auth/login', { body: { email: tenant.email, password: PASSWORD } })).status).toBe(200);
    const before = await keysOf(tenant.userId);
    const response = await reissue(tenant.tenantId);
    expect([outcome(response), response.body.error?.message]).toEqual([
      '409 CONFLICT',
      'The owner of this tenant has a password: they sign in (POST /auth/login) and create API keys themselves; no key was issued and none was revoked',
    ]);
    expect(await keysOf(tenant.userId)).toEqual(before);
  });

  it("is CONFLICT once the owner has created a key of their own (signed in through the identity provider), and changes nothing", async () => {
    const tenant = await lostTenant('Own key');
    const idpToken = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(tenant.userId).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(JWT_SECRET));
    const own = await call(app.url, '/api/developer/api-keys', { headers: { authorization: `Bearer ${idpToken}` }, body: { name: 'laptop' } });
    expect(own.status, own.text).toBe(201);
    const before = await keysOf(tenant.userId);
    expect(before.map((key) => [key.name, key.last_used_at, key.issued_by_platform])).toEqual([['Owner key', null, true], ['laptop', null, false]]);
    const response = await reissue(tenant.tenantId);
    expect([outcome(response), response.body.error?.message]).toEqual([
      '409 CONFLICT',
      'The owner of this tenant has created an API key of their own: they create API keys themselves (POST /developer/api-keys); no key was issued and none was revoked',
    ]);
    expect(await keysOf(tenant.userId)).toEqual(before);
  });

  it('is CONFLICT for an owner who is a platform admin (the first run made them, and wrote their key to a file)', async () => {
    const tenant = await lostTenant('Admin owner');
    await sqlAsOwner('update users set is_platform_admin = true where id = $1', [tenant.userId]);
    const before = await keysOf(tenant.userId);
    const response = await reissue(tenant.tenantId);
    expect([outcome(response), response.body.error?.message]).toEqual([
      '409 CONFLICT',
      'The owner of this tenant is a platform admin (made at first run, whose key was written to bootstrap.json): no key was issued and none was revoked',
    ]);
    expect(await keysOf(tenant.userId)).toEqual(before);
  });

  it('is FORBIDDEN to anyone but a platform admin, on both surfaces, and changes nothing', async () => {
    const tenant = await lostTenant('Not yours');
    const plain = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Plain');
    const other = await createTenant(app, 'Other owner');
    const before = await keysOf(tenant.userId);
    const attempts = {
      plainUser: outcome(await reissue(tenant.tenantId, plain.apiKey)),
      otherTenantOwner: outcome(await reissue(tenant.tenantId, other.apiKey)),
      trpc: outcome(await call(app.url, '/trpc/admin.reissueOwnerKey', { apiKey: plain.apiKey, body: { tenantId: tenant.tenantId } })),
      anonymous: outcome(await call(app.url, `/api/admin/tenants/${tenant.tenantId}/owner-key`, { method: 'POST' })),
    };
    expect(attempts).toEqual({ plainUser: '403 FORBIDDEN', otherTenantOwner: '403 FORBIDDEN', trpc: '403 -32003', anonymous: '401 UNAUTHORIZED' });
    expect(await keysOf(tenant.userId)).toEqual(before);
  });

  it('is NOT_FOUND for a tenant that does not exist, and VALIDATION_ERROR for an id that is no uuid', async () => {
    expect(outcome(await reissue('00000000-0000-4000-8000-000000000000'))).toBe('404 NOT_FOUND');
    expect(outcome(await reissue('not-a-tenant'))).toBe('400 VALIDATION_ERROR');
  });

  it('leaves exactly one working key when calls race: they take turns on the owner, and each revokes the key before it', async () => {
    const tenant = await lostTenant('Race');
    const [lost] = await keysOf(tenant.userId);
    // The lost key's row is held, so both calls are under way together before either can finish.
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    let answers: ApiResponse[];
    try {
      await holder.query('begin');
      await holder.query('select 1 from api_keys where id = $1 for update', [lost.id]);
      const racing = Promise.all([reissue(tenant.tenantId), reissue(tenant.tenantId)]);
      await untilLockWaiters(app.database.ownerUrl, 2);
      await holder.query('commit');
      answers = await racing;
    } finally {
      await holder.end();
    }
    expect(answers.map(outcome)).toEqual(['201 ok', '201 ok']);
    const works = await Promise.all(answers.map(async (answer) => (await call(app.url, '/api/me', { apiKey: answer.body.data.key })).status));
    expect(works.sort()).toEqual([200, 401]);
    const keys = await keysOf(tenant.userId);
    expect(keys.filter((key) => key.revoked_at === null)).toHaveLength(1);
    expect(keys).toHaveLength(3);
  });
});

describe('keys made before migration 0022', () => {
  it("count as issued by the platform exactly when the tenant's creation made them, so those tenants can be recovered too", async () => {
    const tenant = await lostTenant('Before the column');
    const { generateApiKey } = await import('../../control-plane/auth/api-key-format.ts');
    const later = generateApiKey();
    // A key of the owner's own, given the creation key's name: the name alone does not make it the platform's.
    await sqlAsOwner('insert into api_keys (tenant_id, user_id, name, prefix, key_hash) values ($1, $2, $3, $4, $5)', [tenant.tenantId, tenant.userId, 'Owner key', later.prefix, later.keyHash]);
    await sqlAsOwner('update api_keys set issued_by_platform = false where user_id = $1', [tenant.userId]);
    await withOwnerKysely(app.database.ownerUrl, markKeysIssuedWithTheirUser);
    expect((await keysOf(tenant.userId)).map((key) => key.issued_by_platform)).toEqual([true, false]);

    const untouched = await lostTenant('Before the column, untouched');
    await sqlAsOwner('update api_keys set issued_by_platform = false where user_id = $1', [untouched.userId]);
    await withOwnerKysely(app.database.ownerUrl, markKeysIssuedWithTheirUser);
    expect(outcome(await reissue(untouched.tenantId))).toBe('201 ok');
  });
});
