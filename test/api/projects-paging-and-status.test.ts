import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';

let app: TestApp;
const sql = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('GET /api/projects', () => {
  it('pages 50 by default and at most 200, with the total of every match', async () => {
    const tenant = await createTenant(app, 'Many');
    await sql(`insert into projects (tenant_id, organization_id, name, created_by) select $1, $2, 'P' || n, $3 from generate_series(1, 205) n`, [tenant.tenantId, tenant.organizationId, tenant.userId]);
    const first = await call(app.url, '/api/projects', { apiKey: tenant.apiKey });
    expect([first.status, first.body.data.projects.length, first.body.data.total, first.body.data.limit, first.body.data.offset]).toEqual([200, 50, 205, 50, 0]);
    const widest = await call(app.url, '/api/projects?limit=200&offset=200', { apiKey: tenant.apiKey });
    expect([widest.body.data.projects.length, widest.body.data.total, widest.body.data.limit, widest.body.data.offset]).toEqual([5, 205, 200, 200]);
    expect((await call(app.url, '/api/projects?limit=200', { apiKey: tenant.apiKey })).body.data.projects).toHaveLength(200);
  });

  it('filters by each status, active, completed and archived, and counts only the matches', async () => {
    const tenant = await createTenant(app, 'Statuses');
    const make = async (name: string) => (await call(app.url, '/api/projects', { apiKey: tenant.apiKey, body: { name } })).body.data.id as string;
    const [active, completed, archived] = [await make('Open'), await make('Done'), await make('Shelved')];
    // Completion is the workflow's to set, not PATCH's.
    await sql(`update projects set status = 'completed' where id = $1`, [completed]);
    expect((await call(app.url, `/api/projects/${archived}`, { method: 'PATCH', apiKey: tenant.apiKey, body: { status: 'archived' } })).status).toBe(200);
    const byStatus = async (status: string) => {
      const data = (await call(app.url, `/api/projects?status=${status}`, { apiKey: tenant.apiKey })).body.data;
      return { total: data.total, ids: data.projects.map((p: { id: string; status: string }) => `${p.id}:${p.status}`) };
    };
    expect(await byStatus('active')).toEqual({ total: 1, ids: [`${active}:active`] });
    expect(await byStatus('completed')).toEqual({ total: 1, ids: [`${completed}:completed`] });
    expect(await byStatus('archived')).toEqual({ total: 1, ids: [`${archived}:archived`] });
  });
});

describe('PATCH /api/projects/{projectId} status', () => {
  it('moves a project between active and archived, both ways', async () => {
    const created = await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, body: { name: 'Back and forth' } });
    const id = created.body.data.id;
    for (const status of ['archived', 'active', 'archived', 'active']) {
      const response = await call(app.url, `/api/projects/${id}`, { method: 'PATCH', apiKey: app.bootstrap.apiKey, body: { status } });
      expect([response.status, response.body.data?.status], response.text).toEqual([200, status]);
      expect((await sql('select status from projects where id = $1', [id]))[0].status).toBe(status);
    }
  });
});

describe('POST /api/projects without a name', () => {
  it('is refused by field, and writes nothing', async () => {
    const before = await countRows(app.database.ownerUrl, 'projects');
    for (const body of [{}, { description: 'no name' }, { name: null }, { name: '   ' }]) {
      const response = await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, body });
      expect([response.status, response.body.error?.code, response.body.error?.details?.issues?.map((i: { field: string }) => i.field)], JSON.stringify(body)).toEqual([400, 'VALIDATION_ERROR', ['name']]);
    }
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(before);
  });
});
