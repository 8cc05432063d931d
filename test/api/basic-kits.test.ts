import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicSurface } from '../helpers/basic-surface.ts';
import { call, type ApiResponse, type RequestOptions } from '../helpers/http.ts';
import { sampleKit } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant, ownerOfAnotherOrganization } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Variant A's kits (/api/basic/kits): the caller's organizations' kits, read as plain resources,
 * published ⇔ active, and deprecated or published again by the organization's admins and owners.
 */

let app: TestApp;
let key: string;
let basic: (method: string, template: string, path: string, options?: RequestOptions) => Promise<ApiResponse>;
const kitIds = { zeta: '', alpha: '' };
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

const publish = async (apiKey: string, orgId: string, id: string, displayName: string, version = '1.0.0') => {
  const kit = sampleKit({ id, version });
  kit.manifest.metadata.displayName = displayName;
  const published = await call(app.url, `/api/${orgId}/kits`, { apiKey, body: kit });
  expect(published.status, published.text).toBe(201);
  return published.body.data.id as string;
};

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
  ({ basic } = await basicSurface(app, key));
  kitIds.zeta = await publish(key, app.bootstrap.organizationId, 'zeta-kit', 'Zeta starter');
  kitIds.alpha = await publish(key, app.bootstrap.organizationId, 'alpha-kit', 'Alpha starter');
  await publish(key, app.bootstrap.organizationId, 'alpha-kit', 'Alpha starter', '1.2.0');
});
afterAll(() => app?.stop());

describe('/api/basic/kits', () => {
  it("lists the organization's kits, no built-in, as plain resources", async () => {
    const listed = await basic('GET', '/kits', '/kits?sort=name');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.items.map((kit: { name: string; version: string; status: string }) => [kit.name, kit.version, kit.status])).toEqual([
      ['Alpha starter', '1.2.0', 'published'],
      ['Zeta starter', '1.0.0', 'published'],
    ]);
    expect(listed.body.items[0]).toEqual({
      id: kitIds.alpha,
      name: 'Alpha starter',
      description: expect.any(String),
      version: '1.2.0',
      status: 'published',
      metadata: { kitId: 'alpha-kit', kitType: expect.any(String), organizationId: app.bootstrap.organizationId, platform: { name: 'generic', category: 'backend' } },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const builtIns = await sqlAsOwner('select id from kits where organization_id is null');
    expect(builtIns.length).toBeGreaterThan(0);
    for (const { id } of builtIns) expect((await basic('GET', '/kits/{id}', `/kits/${id}`)).status).toBe(404);
  });

  it('deprecates and publishes again, as an admin of its organization; Variant B sees the same', async () => {
    const deprecated = await basic('PATCH', '/kits/{id}', `/kits/${kitIds.zeta}`, { body: { status: 'deprecated' } });
    expect([deprecated.status, deprecated.body.status]).toEqual([200, 'deprecated']);
    const inB = await call(app.url, `/api/${app.bootstrap.organizationId}/kits/zeta-kit`, { apiKey: key });
    expect(inB.body.data.status).toBe('deprecated');
    const again = await basic('PATCH', '/kits/{id}', `/kits/${kitIds.zeta}`, { body: { id: kitIds.zeta.toUpperCase(), status: 'published' } });
    expect([again.status, again.body.status]).toEqual([200, 'published']);
    expect((await sqlAsOwner('select status from kits where id = $1', [kitIds.zeta]))[0].status).toBe('active');
  });

  it('changes nothing its manifest says, and takes no method it does not serve', async () => {
    const renamed = await basic('PATCH', '/kits/{id}', `/kits/${kitIds.zeta}`, { body: { name: 'Renamed' } });
    expect([renamed.status, renamed.body.code, renamed.body.details.issues]).toEqual([400, 'VALIDATION_ERROR', [{ field: 'name', issue: 'is not a field that can be set here' }]]);
    const created = await call(app.url, '/api/basic/kits', { apiKey: key, body: { id: crypto.randomUUID(), name: 'New kit' } });
    expect([created.status, created.headers.get('allow'), created.body.code]).toEqual([405, 'GET, HEAD', 'METHOD_NOT_ALLOWED']);
    const deleted = await call(app.url, `/api/basic/kits/${kitIds.zeta}`, { method: 'DELETE', apiKey: key });
    expect([deleted.status, deleted.headers.get('allow')]).toEqual([405, 'GET, HEAD, PATCH']);
    expect((await sqlAsOwner('select display_name from kits where id = $1', [kitIds.zeta]))[0].display_name).toBe('Zeta starter');
  });

  it('shows a member the kits but lets only admins and owners change them', async () => {
    const member = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Kit member');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`, [app.bootstrap.tenantId, app.bootstrap.organizationId, member.userId]);
    expect((await call(app.url, `/api/basic/kits/${kitIds.zeta}`, { apiKey: member.apiKey })).status).toBe(200);
    const refused = await call(app.url, `/api/basic/kits/${kitIds.zeta}`, { method: 'PATCH', apiKey: member.apiKey, body: { status: 'deprecated' } });
    expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    expect((await sqlAsOwner('select status from kits where id = $1', [kitIds.zeta]))[0].status).toBe('active');
  });

  it("hides other organizations' and tenants' kits", async () => {
    const elsewhere = await ownerOfAnotherOrganization(app, key, 'Kit neighbour');
    const theirs = await call(app.url, '/api/basic/kits', { apiKey: elsewhere.apiKey });
    expect([theirs.status, theirs.body.total]).toEqual([200, 0]);
    expect((await call(app.url, `/api/basic/kits/${kitIds.zeta}`, { apiKey: elsewhere.apiKey })).status).toBe(404);
    const stranger = await createTenant(app, 'Kit stranger');
    await call(app.url, `/api/admin/tenants/${stranger.tenantId}/features`, { method: 'PATCH', apiKey: key, body: { kits_enabled: true } });
    const theirPatch = await call(app.url, `/api/basic/kits/${kitIds.zeta}`, { method: 'PATCH', apiKey: stranger.apiKey, body: { status: 'deprecated' } });
    expect([theirPatch.status, theirPatch.body.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('answers FORBIDDEN, naming the flag, while kits are off for the tenant', async () => {
    const switchKits = (enabled: boolean) => call(app.url, `/api/admin/tenants/${app.bootstrap.tenantId}/features`, { method: 'PATCH', apiKey: key, body: { kits_enabled: enabled } });
    expect((await switchKits(false)).status).toBe(200);
    try {
      const listed = await basic('GET', '/kits', '/kits');
      expect([listed.status, listed.body.code, listed.body.details]).toEqual([403, 'FORBIDDEN', { featureFlag: 'kits_enabled' }]);
    } finally {
      await switchKits(true);
    }
  });
});
