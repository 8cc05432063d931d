import { SignJWT } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markUsersWhoHaveActed } from '../../migrations/0023_users_note_bearer_authentication.ts';
import { asAppRoleInTenant } from '../helpers/app-role-sql.ts';
import { call, type ApiResponse } from '../helpers/http.ts';
import { whileTransactionHolds } from '../helpers/lock-holder.ts';
import { ownerQuery, withOwnerKysely } from '../helpers/owner-sql.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * An owner who signs in only with their identity provider's tokens leaves no password and no used
 * key behind; the reissue of their key (POST /api/admin/tenants/{tenantId}/owner-key) must still
 * see that they got in, or the admin would get a key into the owner's organizations.
 */
const JWT_SECRET = 'a-shared-jwt-secret-for-bearer-sign-in-tests-0123456789';
const REFUSAL =
  "The owner of this tenant has signed in with a bearer token (their identity provider's): they create API keys themselves (POST /developer/api-keys); no key was issued and none was revoked";

let app: TestApp;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const outcome = (response: ApiResponse) => `${response.status} ${response.body?.error?.code ?? 'ok'}`;
const reissue = (tenantId: string) => call(app.url, `/api/admin/tenants/${tenantId}/owner-key`, { method: 'POST', apiKey: app.bootstrap.apiKey });
const keysOf = (userId: string) => sqlAsOwner('select id, revoked_at, last_used_at from api_keys where user_id = $1 order by created_at, id', [userId]);
const noteOf = async (userId: string) => (await sqlAsOwner('select first_bearer_authenticated_at as noted from users where id = $1', [userId]))[0]!.noted as Date | null;
const idpBearer = async (userId: string) =>
  `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(userId).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(JWT_SECRET))}`;

beforeAll(async () => {
  app = await startTestApp({ env: { JWT_SECRET } });
});
afterAll(() => app?.stop());

describe("the owner-key reissue after the owner signed in with their identity provider's token", () => {
  it('is CONFLICT once the owner has made a project that way, changes no key, and the admin never reads the project', async () => {
    const tenant = await createTenant(app, 'IdP owner at work');
    const authorization = await idpBearer(tenant.userId);
    const project = await call(app.url, '/api/projects', { headers: { authorization }, body: { name: 'Secret plans', organizationId: tenant.organizationId } });
    expect(project.status, project.text).toBe(201);
    const before = await keysOf(tenant.userId);

    const response = await reissue(tenant.tenantId);
    expect([outcome(response), response.body.error?.message, response.body.data?.key]).toEqual(['409 CONFLICT', REFUSAL, undefined]);
    expect(await keysOf(tenant.userId)).toEqual(before);
    expect((await call(app.url, '/api/projects', { headers: { authorization } })).body.data.projects.map((p: { id: string }) => p.id)).toEqual([project.body.data.id]);
  });

  it('is CONFLICT after a sign-in that only read, and the note is written once, by the first request', async () => {
    const tenant = await createTenant(app, 'IdP owner, one look');
    expect(await noteOf(tenant.userId)).toBeNull();
    const authorization = await idpBearer(tenant.userId);
    expect((await call(app.url, '/api/me', { headers: { authorization } })).status).toBe(200);
    const noted = await noteOf(tenant.userId);
    expect(noted).toBeInstanceOf(Date);
    expect((await call(app.url, '/api/me', { headers: { authorization } })).status).toBe(200);
    expect(await noteOf(tenant.userId)).toEqual(noted);

    expect(outcome(await reissue(tenant.tenantId))).toBe('409 CONFLICT');
  });

  it('still answers 201 for an owner no token has authenticated (a token that does not verify notes nothing)', async () => {
    const tenant = await createTenant(app, 'IdP owner, never in');
    const forged = `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(tenant.userId).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(`${JWT_SECRET}-wrong`))}`;
    expect((await call(app.url, '/api/me', { headers: { authorization: forged } })).status).toBe(401);
    expect(await noteOf(tenant.userId)).toBeNull();
    expect(outcome(await reissue(tenant.tenantId))).toBe('201 ok');
  });

  it("a first sign-in that meets the owner's row locked (a reissue under way) waits, succeeds, and is seen by the next reissue", async () => {
    const tenant = await createTenant(app, 'IdP owner, racing');
    const authorization = await idpBearer(tenant.userId);
    const me = await whileTransactionHolds(
      app.database.ownerUrl,
      (holder) => holder.query('select 1 from users where id = $1 for no key update', [tenant.userId]),
      () => call(app.url, '/api/me', { headers: { authorization } }),
    );
    expect([me.status, me.body.data?.userId]).toEqual([200, tenant.userId]);
    expect(await noteOf(tenant.userId)).toBeInstanceOf(Date);
    expect(outcome(await reissue(tenant.tenantId))).toBe('409 CONFLICT');
  });

  it("a later sign-in takes no lock: it answers while another transaction holds the owner's row", async () => {
    const tenant = await createTenant(app, 'IdP owner, row held');
    const authorization = await idpBearer(tenant.userId);
    expect((await call(app.url, '/api/me', { headers: { authorization } })).status).toBe(200);
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select 1 from users where id = $1 for update', [tenant.userId]);
      // Answered while the lock is held: were it waited for, this would never resolve.
      expect((await call(app.url, '/api/me', { headers: { authorization } })).status).toBe(200);
    } finally {
      await holder.query('rollback').catch(() => {});
      await holder.end();
    }
  });
});

describe('app_private.authenticate_user, as the app role', () => {
  it('finds the user in a read-only transaction (a standby, a read-only database), leaving the note for later', async () => {
    const tenant = await createTenant(app, 'Read-only sign-in');
    const client = new pg.Client({ connectionString: app.database.appUrl });
    await client.connect();
    try {
      await client.query('begin transaction read only');
      const { rows } = await client.query('select * from app_private.authenticate_user($1)', [tenant.userId]);
      await client.query('commit');
      expect(rows).toEqual([{ user_id: tenant.userId, tenant_id: tenant.tenantId, is_platform_admin: false }]);
    } finally {
      await client.end();
    }
    expect(await noteOf(tenant.userId)).toBeNull();
  });

  it('cannot write the note directly: only the definer function does', async () => {
    const tenant = await createTenant(app, 'No direct note');
    expect(await asAppRoleInTenant(app.database.appUrl, tenant.tenantId, 'update users set first_bearer_authenticated_at = null where id = $1', [tenant.userId])).toBe('42501');
  });
});

describe('users from before migration 0023', () => {
  it('count as signed in when they had made something, so those tenants are protected too; untouched owners stay recoverable', async () => {
    const atWork = await createTenant(app, 'Before the note, at work');
    const project = await call(app.url, '/api/projects', { headers: { authorization: await idpBearer(atWork.userId) }, body: { name: 'Plans', organizationId: atWork.organizationId } });
    expect(project.status, project.text).toBe(201);
    const untouched = await createTenant(app, 'Before the note, untouched');
    await sqlAsOwner('update users set first_bearer_authenticated_at = null where id = any($1)', [[atWork.userId, untouched.userId]]);

    await withOwnerKysely(app.database.ownerUrl, markUsersWhoHaveActed);
    expect(await noteOf(atWork.userId)).toBeInstanceOf(Date);
    expect(await noteOf(untouched.userId)).toBeNull();
    expect([outcome(await reissue(atWork.tenantId)), outcome(await reissue(untouched.tenantId))]).toEqual(['409 CONFLICT', '201 ok']);
  });
});
