import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Lists are ordered by createdAt, then id, and answers show createdAt to the millisecond. Rows made
 * in the same millisecond must therefore list by id: the order a client sees must follow from
 * what the client is shown.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
});
afterAll(() => app?.stop());

describe('list order', () => {
  // Catches a regression only when parallel creates share a millisecond (most runs do); the tests below are the deterministic guards.
  it('projects made at the same moment list in (createdAt, id) order, as the answers show them', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `Same moment ${i}`);
    await Promise.all(names.map((name) => call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, body: { name } })));
    const listed = (await call(app.url, '/api/projects?limit=200', { apiKey: app.bootstrap.apiKey })).body.data.projects as Array<{ id: string; createdAt: string }>;
    expect(listed).toHaveLength(40);
    const byWhatIsShown = [...listed].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    expect(listed.map((p) => p.id)).toEqual(byWhatIsShown.map((p) => p.id));
  });

  it('every list breaks a tie in its time by id: organizations, API keys, members, assignments', async () => {
    const { tenantId, organizationId, apiKey } = app.bootstrap;
    const sql = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);
    const sameMoment = '2030-01-01T00:00:00.000Z';
    const sortedIds = (ids: string[]) => [...ids].sort();

    const organizations: string[] = [];
    for (const n of [1, 2, 3, 4]) organizations.push((await call(app.url, '/api/organizations', { apiKey, body: { name: `Tie ${n}`, slug: `tie-${n}` } })).body.data.id);
    await sql('update organizations set created_at = $1 where id = any($2)', [sameMoment, organizations]);
    const listedOrganizations = (await call(app.url, '/api/organizations?limit=200', { apiKey })).body.data.organizations as Array<{ id: string }>;
    expect(listedOrganizations.map((o) => o.id).filter((id) => organizations.includes(id))).toEqual(sortedIds(organizations));

    const keys: string[] = [];
    for (const n of [1, 2, 3, 4]) keys.push((await call(app.url, '/api/developer/api-keys', { apiKey, body: { name: `tie ${n}` } })).body.data.id);
    await sql('update api_keys set created_at = $1 where id = any($2)', [sameMoment, keys]);
    const listedKeys = (await call(app.url, '/api/developer/api-keys', { apiKey })).body.data.apiKeys as Array<{ id: string }>;
    expect(listedKeys.map((k) => k.id).filter((id) => keys.includes(id))).toEqual(sortedIds(keys));

    const customers: string[] = [];
    for (const n of [1, 2, 3, 4]) {
      const customer = await createUserInTenant(app, sql, tenantId, `Tie${n}`);
      // Customers join through invitations; inserted here, as the owner would have them.
      await sql(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [tenantId, organizationId, customer.userId]);
      customers.push(customer.userId);
    }
    const memberships = (await sql('select id from organization_members where user_id = any($1)', [customers])).map((row) => row.id as string);
    await sql('update organization_members set joined_at = $1 where id = any($2)', [sameMoment, memberships]);
    const listedMembers = (await call(app.url, `/api/organizations/${organizationId}/members`, { apiKey })).body.data.members as Array<{ id: string }>;
    expect(listedMembers.map((m) => m.id).filter((id) => memberships.includes(id))).toEqual(sortedIds(memberships));

    const project = (await call(app.url, '/api/projects', { apiKey, body: { name: 'Shown to all', organizationId } })).body.data.id;
    const assignments: string[] = [];
    for (const customerUserId of customers) {
      assignments.push((await call(app.url, '/api/agency-projects', { apiKey, body: { organizationId, projectId: project, customerUserId } })).body.data.id);
    }
    await sql('update agency_project_assignments set created_at = $1 where id = any($2)', [sameMoment, assignments]);
    const listedAssignments = (await call(app.url, `/api/agency-projects?organizationId=${organizationId}&limit=200`, { apiKey })).body.data.assignments as Array<{ id: string }>;
    expect(listedAssignments.map((a) => a.id).filter((id) => assignments.includes(id))).toEqual(sortedIds(assignments));
  });

  it('API keys and members page like every list: limit, offset, total; keys filter by status', async () => {
    const sql = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);
    const holder = await createUserInTenant(app, sql, app.bootstrap.tenantId, 'Pager');
    const made: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) made.push((await call(app.url, '/api/developer/api-keys', { apiKey: holder.apiKey, body: { name: `page ${n}` } })).body.data.id);
    for (const id of made.slice(0, 2)) expect((await call(app.url, `/api/developer/api-keys/${id}`, { method: 'DELETE', apiKey: holder.apiKey })).status).toBe(200);
    const keys = async (query: string) => (await call(app.url, `/api/developer/api-keys${query}`, { apiKey: holder.apiKey })).body.data;

    const all = await keys('');
    expect({ total: all.total, limit: all.limit, offset: all.offset, listed: all.apiKeys.length }).toEqual({ total: 6, limit: 50, offset: 0, listed: 6 });
    const page = await keys('?limit=2&offset=1');
    expect({ total: page.total, ids: page.apiKeys.map((k: { id: string }) => k.id) }).toEqual({ total: 6, ids: all.apiKeys.slice(1, 3).map((k: { id: string }) => k.id) });
    const active = await keys('?status=active');
    expect([active.total, active.apiKeys.every((k: { revokedAt: unknown }) => k.revokedAt === null)]).toEqual([4, true]);
    expect((await keys('?status=revoked')).apiKeys.map((k: { id: string }) => k.id)).toEqual(made.slice(0, 2));
    const refused = await call(app.url, '/api/developer/api-keys?limit=201', { apiKey: holder.apiKey });
    expect([refused.status, refused.body.error.details.issues]).toEqual([400, [{ field: 'limit', issue: 'must be at most 200' }]]);

    const { organizationId, apiKey } = app.bootstrap;
    expect((await call(app.url, `/api/organizations/${organizationId}/members`, { apiKey, body: { userId: holder.userId, role: 'member' } })).status).toBe(201);
    const members = async (query: string) => (await call(app.url, `/api/organizations/${organizationId}/members${query}`, { apiKey })).body.data;
    const everyone = await members('?limit=200');
    expect(everyone.total).toBe(everyone.members.length);
    const second = await members('?limit=1&offset=1');
    expect([second.total, second.limit, second.offset, second.members.map((m: { id: string }) => m.id)]).toEqual([everyone.total, 1, 1, [everyone.members[1].id]]);
  });

  it('every ordering column holds whole milliseconds, as answers show it', async () => {
    await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, body: { name: 'One more' } });
    await call(app.url, '/api/developer/api-keys', { apiKey: app.bootstrap.apiKey, body: { name: 'one more' } });
    // Lists order by created_at (members by joined_at), shown beside updated_at: every such column, so a new table is held to it too.
    const columns = await ownerQuery<{ table_name: string; column_name: string; column_default: string }>(
      app.database.ownerUrl,
      `select table_name, column_name, column_default from information_schema.columns where table_schema = 'public' and column_name in ('created_at', 'joined_at', 'updated_at')`,
    );
    expect(columns.length).toBeGreaterThanOrEqual(18);
    const finer: string[] = [];
    for (const { table_name: table, column_name: column, column_default: fallback } of columns) {
      const rows = await countRows(app.database.ownerUrl, `${table} where ${column} <> date_trunc('milliseconds', ${column})`);
      if (rows > 0 || !fallback?.includes('date_trunc')) finer.push(`${table}.${column}: ${rows} rows, default ${fallback}`);
    }
    expect(finer).toEqual([]);
  });
});
