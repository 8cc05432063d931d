import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let admin: string;
let other: { tenantId: string; userId: string; apiKey: string };

beforeAll(async () => {
  app = await startTestApp();
  admin = app.bootstrap.apiKey;
  const created = await call(app.url, '/api/admin/tenants', { apiKey: admin, body: { name: 'Acme', ownerEmail: 'owner@acme.test' } });
  expect(created.status).toBe(201);
  other = created.body.data;
});
afterAll(() => app?.stop());


describe('POST /api/admin/tenants', () => {
  it('creates a tenant whose owner key works in that tenant only', async () => {
    expect(other).toEqual({ tenantId: expect.any(String), organizationId: expect.any(String), userId: expect.any(String), apiKey: expect.stringMatching(/^swk_/) });
    const me = await call(app.url, '/api/me', { apiKey: other.apiKey });
    expect(me.body.data).toMatchObject({ tenantId: other.tenantId, email: 'owner@acme.test', isPlatformAdmin: false });
  });

  it('is for platform admins only', async () => {
    const response = await call(app.url, '/api/admin/tenants', { apiKey: other.apiKey, body: { name: 'Sneaky', ownerEmail: 'x@sneaky.test' } });
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('FORBIDDEN');
  });

  it("gives the tenant's first organization a slug its owner can send back: the slug rules hold for a name cut where a hyphen falls", async () => {
    // Lower-cased and hyphenated, this name's 40th character is a hyphen: cut there, the slug read "…holdings--1a2b3c4d5e6f".
    const created = await call(app.url, '/api/admin/tenants', { apiKey: admin, body: { name: 'Acme Corporation International Holdings, Inc.', ownerEmail: `long-${Date.now()}@acme.test` } });
    expect(created.status, created.text).toBe(201);
    const { organizationId, apiKey } = created.body.data;
    const organization = (await call(app.url, `/api/organizations/${organizationId}`, { apiKey })).body.data;
    expect(organization.slug).toMatch(/^acme-corporation-international-holdings-[0-9a-f]{12}$/);
    const check = await call(app.url, `/api/organizations/slug-check?slug=${organization.slug}`, { apiKey });
    expect([check.status, check.body.data?.available]).toEqual([200, false]);
    const resent = await call(app.url, `/api/organizations/${organizationId}`, { method: 'PUT', apiKey, body: { name: organization.name, slug: organization.slug } });
    expect(resent.status, resent.text).toBe(200);
  });

  it('refuses bad input and a duplicate owner email, leaving no rows behind', async () => {
    const tenantsBefore = await countRows(app.database.ownerUrl, 'tenants');
    const usersBefore = await countRows(app.database.ownerUrl, 'users');
    const bad = await call(app.url, '/api/admin/tenants', { apiKey: admin, body: { name: '', ownerEmail: 'not-an-email' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues.map((i: { field: string }) => i.field).sort()).toEqual(['name', 'ownerEmail']);
    const duplicate = await call(app.url, '/api/admin/tenants', { apiKey: admin, body: { name: 'Again', ownerEmail: 'OWNER@acme.test' } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe('CONFLICT');
    expect(await countRows(app.database.ownerUrl, 'tenants')).toBe(tenantsBefore);
    expect(await countRows(app.database.ownerUrl, 'users')).toBe(usersBefore);
    expect(await countRows(app.database.ownerUrl, 'organizations')).toBe(tenantsBefore);
  });
});

describe('row-level security', () => {
  it('connects as a role that owns no table and cannot bypass RLS', async () => {
    const [role] = await ownerQuery(app.database.ownerUrl, "select rolsuper, rolbypassrls from pg_roles where rolname = 'specwright_app'");
    expect(role).toEqual({ rolsuper: false, rolbypassrls: false });
    expect(await countRows(app.database.ownerUrl, "pg_tables where schemaname = 'public' and tableowner = 'specwright_app'")).toBe(0);
    const unprotected = await ownerQuery(app.database.ownerUrl, "select c.relname from pg_class c join pg_attribute a on a.attrelid = c.oid where a.attname = 'tenant_id' and c.relkind = 'r' and not c.relrowsecurity");
    expect(unprotected).toEqual([]);
  });

  it('shows a query with no tenant set no rows at all', async () => {
    const client = new pg.Client({ connectionString: app.database.appUrl });
    await client.connect();
    try {
      for (const table of ['tenants', 'users', 'organizations', 'organization_members', 'api_keys']) {
        expect((await client.query(`select * from ${table}`)).rowCount, table).toBe(0);
      }
      await client.query('begin');
      await client.query("select set_config('app.tenant_id', $1, true)", [other.tenantId]);
      const users = await client.query('select tenant_id from users');
      expect(users.rows).toEqual([{ tenant_id: other.tenantId }]);
      await expect(client.query("insert into users (tenant_id, email, name) values ($1, 'x@y.test', 'x')", [app.bootstrap.tenantId])).rejects.toThrow(/row-level security/);
      await client.query('rollback');
    } finally {
      await client.end();
    }
  });

  it("never shows one tenant's rows to another", async () => {
    const mine = await call(app.url, '/api/developer/api-keys', { apiKey: admin });
    const theirs = await call(app.url, '/api/developer/api-keys', { apiKey: other.apiKey });
    const myIds = mine.body.data.apiKeys.map((k: { id: string }) => k.id);
    const theirIds = theirs.body.data.apiKeys.map((k: { id: string }) => k.id);
    expect(myIds.filter((id: string) => theirIds.includes(id))).toEqual([]);
    // Another tenant's id answers NOT_FOUND (never FORBIDDEN) and changes nothing.
    const attempt = await call(app.url, `/api/developer/api-keys/${myIds[0]}`, { method: 'DELETE', apiKey: other.apiKey });
    expect(attempt.status).toBe(404);
    expect((await call(app.url, '/api/me', { apiKey: admin })).status).toBe(200);
  });
});

describe('X-Tenant-ID', () => {
  it('lets a platform admin act in another tenant', async () => {
    const response = await call(app.url, '/api/me', { apiKey: admin, headers: { 'x-tenant-id': other.tenantId } });
    expect(response.status).toBe(200);
    // Still who they are there: their own row is in their home tenant, out of the other's sight.
    const home = (await call(app.url, '/api/me', { apiKey: admin })).body.data;
    expect(home.email).toMatch(/@/);
    expect(response.body.data).toEqual({ ...home, tenantId: other.tenantId, homeTenantId: app.bootstrap.tenantId });
  });

  it('answers NOT_FOUND for an admin naming a tenant that does not exist', async () => {
    const response = await call(app.url, '/api/me', { apiKey: admin, headers: { 'x-tenant-id': '00000000-0000-4000-8000-000000000000' } });
    expect(response.status).toBe(404);
  });

  it('answers VALIDATION_ERROR naming the header for an admin sending an X-Tenant-ID that is no uuid', async () => {
    for (const value of ['garbage', '', ' ']) {
      const response = await call(app.url, '/api/me', { apiKey: admin, headers: { 'x-tenant-id': value } });
      expect([value, response.status, response.body.error?.code, response.body.error?.message]).toEqual([value, 400, 'VALIDATION_ERROR', 'X-Tenant-ID must be a tenant id (a uuid)']);
    }
  });

  it('is FORBIDDEN for anyone else naming another tenant, and harmless naming their own', async () => {
    const forbidden = await call(app.url, '/api/me', { apiKey: other.apiKey, headers: { 'x-tenant-id': app.bootstrap.tenantId } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe('FORBIDDEN');
    const own = await call(app.url, '/api/me', { apiKey: other.apiKey, headers: { 'x-tenant-id': other.tenantId } });
    expect(own.status).toBe(200);
  });

  it('reads a tenant id in any letter case as the same tenant', async () => {
    const own = await call(app.url, '/api/projects', { apiKey: other.apiKey, headers: { 'x-tenant-id': other.tenantId.toUpperCase() } });
    expect(own.status, own.text).toBe(200);
    // The admin naming their own tenant in capitals is at home: developer settings still work.
    const home = await call(app.url, '/api/developer/api-keys', { apiKey: admin, headers: { 'x-tenant-id': app.bootstrap.tenantId.toUpperCase() } });
    expect(home.status, home.text).toBe(200);
    const acting = await call(app.url, '/api/me', { apiKey: admin, headers: { 'x-tenant-id': other.tenantId.toUpperCase() } });
    expect(acting.body.data.tenantId).toBe(other.tenantId);
  });

  it('does not let a platform admin found an organization in another tenant (they would own it from outside)', async () => {
    const slug = `outside-${Date.now()}`;
    const before = await countRows(app.database.ownerUrl, 'organization_members');
    const response = await call(app.url, '/api/organizations', { apiKey: admin, headers: { 'x-tenant-id': other.tenantId }, body: { name: 'Outside', slug } });
    expect(response.status, response.text).toBe(403);
    expect(response.body.error.code).toBe('FORBIDDEN');
    expect(await countRows(app.database.ownerUrl, `organizations where slug = '${slug}'`)).toBe(0);
    expect(await countRows(app.database.ownerUrl, 'organization_members')).toBe(before);
  });
});
