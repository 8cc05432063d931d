import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicSurface } from '../helpers/basic-surface.ts';
import { call, type ApiResponse, type RequestOptions } from '../helpers/http.ts';
import { sampleKit } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Who sees which kit on Variant A (/api/basic/kits), held to Variant B's kit routes: the same
 * callers read and change the same kits, and every answer is one /api/basic/openapi.json lists.
 */

let app: TestApp;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
type Basic = (method: string, template: string, path: string, options?: RequestOptions) => Promise<ApiResponse>;
const basicAs = async (apiKey: string): Promise<Basic> => (await basicSurface(app, apiKey)).basic;

const publish = async (apiKey: string, orgId: string, id: string, displayName: string, version = '1.0.0', headers: Record<string, string> = {}) => {
  const kit = sampleKit({ id, version });
  kit.manifest.metadata.displayName = displayName;
  const published = await call(app.url, `/api/${orgId}/kits`, { apiKey, body: kit, headers });
  expect(published.status, published.text).toBe(201);
  return published.body.data.id as string;
};

const joinAs = (organizationId: string, userId: string, role: string) =>
  sqlAsOwner('insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, $4)', [app.bootstrap.tenantId, organizationId, userId, role]);

const newUser = (name: string) => createUserInTenant(app, (sql, values) => sqlAsOwner(sql, values), app.bootstrap.tenantId, name);

const newOrganization = async (name: string) => {
  const founded = await call(app.url, '/api/organizations', { apiKey: app.bootstrap.apiKey, body: { name, slug: `${name.toLowerCase().replace(/\W/g, '-')}-${crypto.randomUUID().slice(0, 8)}` } });
  expect(founded.status, founded.text).toBe(201);
  return founded.body.data.id as string;
};

let homeKit = '';

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  homeKit = await publish(app.bootstrap.apiKey, app.bootstrap.organizationId, 'home-kit', 'Home kit');
});
afterAll(() => app?.stop());

describe('/api/basic/kits: who sees which kit', () => {
  it("shows a platform admin acting in another tenant (X-Tenant-ID) no kit, as Variant B's kit routes do", async () => {
    const stranger = await createTenant(app, 'Kit tenant');
    const enabled = await call(app.url, `/api/admin/tenants/${stranger.tenantId}/features`, { method: 'PATCH', apiKey: app.bootstrap.apiKey, body: { kits_enabled: true } });
    expect(enabled.status, enabled.text).toBe(200);
    const theirKit = await publish(stranger.apiKey, stranger.organizationId, 'their-kit', 'Their kit');
    const headers = { 'X-Tenant-ID': stranger.tenantId };
    const inB = await call(app.url, `/api/${stranger.organizationId}/kits/their-kit`, { apiKey: app.bootstrap.apiKey, headers });
    expect([inB.status, inB.body.error?.code]).toEqual([403, 'ORG_NOT_MEMBER']);

    const basic = await basicAs(app.bootstrap.apiKey);
    const listed = await basic('GET', '/kits', '/kits', { headers });
    expect([listed.status, listed.body.total]).toEqual([200, 0]);
    expect((await basic('GET', '/kits/{id}', `/kits/${theirKit}`, { headers })).status).toBe(404);
    const patched = await basic('PATCH', '/kits/{id}', `/kits/${theirKit}`, { headers, body: { status: 'deprecated' } });
    expect([patched.status, patched.body.code]).toEqual([404, 'NOT_FOUND']);
    expect((await sqlAsOwner('select status from kits where id = $1', [theirKit]))[0].status).toBe('active');
  });

  it('shows a customer of the organization no kit, and lets them change none', async () => {
    const customer = await newUser('Kit customer');
    await joinAs(app.bootstrap.organizationId, customer.userId, 'customer');
    const basic = await basicAs(customer.apiKey);
    expect((await basic('GET', '/kits', '/kits')).body.total).toBe(0);
    expect((await basic('GET', '/kits/{id}', `/kits/${homeKit}`)).status).toBe(404);
    expect((await basic('PATCH', '/kits/{id}', `/kits/${homeKit}`, { body: { status: 'deprecated' } })).status).toBe(404);
    expect((await call(app.url, `/api/${app.bootstrap.organizationId}/kits/home-kit`, { apiKey: customer.apiKey })).status).toBe(403);
  });

  it("answers NOT_FOUND to a PATCH of a built-in kit's id, its owner's admin too, and changes nothing", async () => {
    const [builtIn] = await sqlAsOwner('select id, status, updated_at from kits where organization_id is null order by kit_id limit 1');
    const basic = await basicAs(app.bootstrap.apiKey);
    const patched = await basic('PATCH', '/kits/{id}', `/kits/${builtIn.id}`, { body: { status: 'deprecated' } });
    expect([patched.status, patched.body.code]).toEqual([404, 'NOT_FOUND']);
    expect(await sqlAsOwner('select id, status, updated_at from kits where id = $1', [builtIn.id])).toEqual([builtIn]);
  });

  it("shows a member of several organizations each one's kits; only an admin of its organization changes one, a stranger to it hears NOT_FOUND", async () => {
    const [first, second, third] = [await newOrganization('Kits First'), await newOrganization('Kits Second'), await newOrganization('Kits Third')];
    const firstKit = await publish(app.bootstrap.apiKey, first, 'shared-id', 'First kit');
    const secondKit = await publish(app.bootstrap.apiKey, second, 'shared-id', 'Second kit');
    const thirdKit = await publish(app.bootstrap.apiKey, third, 'shared-id', 'Third kit');
    const user: Actor = await newUser('Kit juggler');
    await joinAs(first, user.userId, 'admin');
    await joinAs(second, user.userId, 'member');
    const basic = await basicAs(user.apiKey);
    const listed = await basic('GET', '/kits', '/kits?sort=name');
    expect(listed.body.items.map((kit: { id: string }) => kit.id)).toEqual([firstKit, secondKit]);
    expect((await basic('PATCH', '/kits/{id}', `/kits/${firstKit}`, { body: { status: 'deprecated' } })).body.status).toBe('deprecated');
    const asMember = await basic('PATCH', '/kits/{id}', `/kits/${secondKit}`, { body: { status: 'deprecated' } });
    expect([asMember.status, asMember.body.code]).toEqual([403, 'FORBIDDEN']);
    const asStranger = await basic('PATCH', '/kits/{id}', `/kits/${thirdKit}`, { body: { status: 'deprecated' } });
    expect([asStranger.status, asStranger.body.code]).toEqual([404, 'NOT_FOUND']);
    expect((await sqlAsOwner('select id, status from kits where id = any($1) order by display_name', [[firstKit, secondKit, thirdKit]])).map((row) => row.status)).toEqual(['deprecated', 'active', 'active']);
  });

  it('answers FORBIDDEN naming the flag to every caller while kits are off, a user of no organization too, as Variant B does', async () => {
    const loner = await newUser('Kit loner');
    const basic = await basicAs(loner.apiKey);
    const switchKits = (enabled: boolean) => call(app.url, `/api/admin/tenants/${app.bootstrap.tenantId}/features`, { method: 'PATCH', apiKey: app.bootstrap.apiKey, body: { kits_enabled: enabled } });
    expect((await switchKits(false)).status).toBe(200);
    try {
      for (const answer of [
        await basic('GET', '/kits', '/kits'),
        await basic('GET', '/kits/{id}', `/kits/${homeKit}`),
        await basic('PATCH', '/kits/{id}', `/kits/${homeKit}`, { body: { status: 'deprecated' } }),
      ]) {
        expect([answer.status, answer.body.code, answer.body.details]).toEqual([403, 'FORBIDDEN', { featureFlag: 'kits_enabled' }]);
      }
      const inB = await call(app.url, `/api/${app.bootstrap.organizationId}/kits/home-kit`, { apiKey: loner.apiKey });
      expect([inB.status, inB.body.error.code]).toEqual([403, 'FORBIDDEN']);
    } finally {
      await switchKits(true);
    }
  });
});

describe('/api/basic/kits: what a kit reads as', () => {
  it('changes nothing, updatedAt included, for a PATCH without a status or with the status it has', async () => {
    const basic = await basicAs(app.bootstrap.apiKey);
    const before = (await basic('GET', '/kits/{id}', `/kits/${homeKit}`)).body;
    for (const body of [{}, { id: homeKit }, { status: 'published' }]) {
      const patched = await basic('PATCH', '/kits/{id}', `/kits/${homeKit}`, { body });
      expect([patched.status, patched.body]).toEqual([200, before]);
    }
    const bare = await call(app.url, `/api/basic/kits/${homeKit}`, { method: 'PATCH', apiKey: app.bootstrap.apiKey });
    expect([bare.status, bare.body]).toEqual([200, before]);
  });

  it('reads a kit with no version and no description (version and description left out)', async () => {
    const organizationId = await newOrganization('Kits Bare');
    const bareKit = await publish(app.bootstrap.apiKey, organizationId, 'bare-kit', 'Bare kit');
    await sqlAsOwner(`update kits set latest_version_id = null, description = '' where id = $1`, [bareKit]);
    const basic = await basicAs(app.bootstrap.apiKey);
    const read = await basic('GET', '/kits/{id}', `/kits/${bareKit}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).not.toHaveProperty('version');
    expect(read.body).not.toHaveProperty('description');
    expect(read.body.name).toBe('Bare kit');
  });

  it('pages kits of one name by id, none twice and none left out, in either order', async () => {
    const organizationId = await newOrganization('Kits Twins');
    const user = await newUser('Kit twin reader');
    await joinAs(organizationId, user.userId, 'member');
    const ids = [];
    for (const n of [1, 2, 3, 4, 5]) ids.push(await publish(app.bootstrap.apiKey, organizationId, `twin-${n}`, 'Twin'));
    const basic = await basicAs(user.apiKey);
    for (const order of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      for (const page of [1, 2, 3]) {
        const listed = await basic('GET', '/kits', `/kits?sort=name&order=${order}&pageSize=2&page=${page}`);
        expect([listed.status, listed.body.total, listed.body.page, listed.body.pageSize]).toEqual([200, 5, page, 2]);
        seen.push(...listed.body.items.map((kit: { id: string }) => kit.id));
      }
      const sorted = [...ids].sort();
      expect(seen).toEqual(order === 'asc' ? sorted : sorted.reverse());
    }
  });

  it('documents on each operation the refusals it can answer, and no other', async () => {
    const { document } = await basicSurface(app, app.bootstrap.apiKey);
    const forbidden = (method: string, template: string) => document.paths[template][method].responses['403'].description as string;
    expect(forbidden('get', '/kits')).not.toMatch(/admin|PATCH/);
    expect(forbidden('get', '/kits/{id}')).not.toMatch(/admin|PATCH/);
    expect(forbidden('patch', '/kits/{id}')).toMatch(/kits_enabled.*admin or owner/);
  });

  it('answers a status change with the kit as it now reads, updatedAt moved, as Variant B reads it', async () => {
    const basic = await basicAs(app.bootstrap.apiKey);
    const before = (await basic('GET', '/kits/{id}', `/kits/${homeKit}`)).body;
    const deprecated = await basic('PATCH', '/kits/{id}', `/kits/${homeKit}`, { body: { status: 'deprecated' } });
    expect(deprecated.status, deprecated.text).toBe(200);
    expect(deprecated.body).toEqual({ ...before, status: 'deprecated', updatedAt: expect.any(String) });
    expect(Date.parse(deprecated.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.updatedAt));
    expect((await basic('GET', '/kits/{id}', `/kits/${homeKit}`)).body).toEqual(deprecated.body);
    expect((await call(app.url, `/api/${app.bootstrap.organizationId}/kits/home-kit`, { apiKey: app.bootstrap.apiKey })).body.data.status).toBe('deprecated');
    const again = await basic('PATCH', '/kits/{id}', `/kits/${homeKit}`, { body: { status: 'published' } });
    expect([again.status, again.body.status]).toEqual([200, 'published']);
  });
});
