import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';

// README, Projects: "Acting in another tenant (X-Tenant-ID), a platform admin sees, changes and
// deletes all of its projects, but creates none there." The refusal says so, as founding an
// organization there does, instead of asking for an organizationId that cannot help.
let app: TestApp;
let other: Awaited<ReturnType<typeof createTenant>>;

beforeAll(async () => {
  app = await startTestApp();
  other = await createTenant(app, 'Elsewhere');
});
afterAll(() => app?.stop());

const projectsOfOther = () => countRows(app.database.ownerUrl, 'projects where tenant_id = $1', [other.tenantId]);

describe('POST /api/projects by a platform admin acting in another tenant', () => {
  it('answers FORBIDDEN, with or without organizationId, and creates nothing', async () => {
    const headers = { 'x-tenant-id': other.tenantId };
    const before = await projectsOfOther();
    for (const body of [{ name: 'From outside' }, { name: 'From outside', organizationId: other.organizationId }]) {
      const response = await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, headers, body });
      expect(response.status, response.text).toBe(403);
      expect(response.body.error.code).toBe('FORBIDDEN');
      expect(response.body.error.message).toMatch(/creates none there/);
    }
    expect(await projectsOfOther()).toBe(before);
  });

  it('still sees, changes and deletes that tenant’s projects, and creates in its own tenant', async () => {
    const made = await call(app.url, '/api/projects', { apiKey: other.apiKey, body: { name: 'Theirs' } });
    expect(made.status, made.text).toBe(201);
    const headers = { 'x-tenant-id': other.tenantId };
    const path = `/api/projects/${made.body.data.id}`;
    expect((await call(app.url, path, { apiKey: app.bootstrap.apiKey, headers })).status).toBe(200);
    expect((await call(app.url, path, { method: 'PATCH', apiKey: app.bootstrap.apiKey, headers, body: { name: 'Renamed' } })).status).toBe(200);
    expect((await call(app.url, path, { method: 'DELETE', apiKey: app.bootstrap.apiKey, headers })).status).toBe(200);
    const home = await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, body: { name: 'At home' } });
    expect(home.status, home.text).toBe(201);
  });
});
