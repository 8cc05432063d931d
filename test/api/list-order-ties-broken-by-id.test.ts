import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, type Actor } from '../helpers/tenant-fixtures.ts';

/**
 * Every list of the issue orders by createdAt, then id. The rows below share one createdAt and are
 * stored in DESCENDING id order, so whatever order the database falls back on without the id
 * (the order rows were stored in, or an index on the time alone) is the reverse of the one
 * required: a list that drops the id from its ordering, or sorts it descending, fails every run,
 * not one run in 24 as with random ids made in sequence.
 */
let app: TestApp;
let owner: Actor & { tenantId: string; organizationId: string };
const SAME_MOMENT = '2030-01-01T00:00:00.000Z';
const sql = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);
/** Four fresh ids, largest first: the order they are inserted in. */
const descendingIds = () => Array.from({ length: 4 }, () => randomUUID()).sort().reverse();
const ascending = (ids: string[]) => [...ids].sort();
const listedIds = (rows: Array<{ id: string }>, ours: string[]) => rows.map((row) => row.id).filter((id) => ours.includes(id));

beforeAll(async () => {
  app = await startTestApp();
  owner = await createTenant(app, 'Ties');
});
afterAll(() => app?.stop());

describe('lists with rows of one createdAt, stored largest id first', () => {
  it('GET /api/organizations lists them by id', async () => {
    const ids = descendingIds();
    for (const [n, id] of ids.entries()) {
      await sql('insert into organizations (id, tenant_id, name, slug, owner_id, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $6)', [id, owner.tenantId, `Tie ${n}`, `tie-${id.slice(0, 8)}`, owner.userId, SAME_MOMENT]);
      await sql(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'owner')`, [owner.tenantId, id, owner.userId]);
    }
    const listed = await call(app.url, '/api/organizations?limit=200', { apiKey: owner.apiKey });
    expect(listed.status, listed.text).toBe(200);
    expect(listedIds(listed.body.data.organizations, ids)).toEqual(ascending(ids));
  });

  it('GET /api/organizations/{id}/members lists them by id', async () => {
    const ids = descendingIds();
    for (const [n, id] of ids.entries()) {
      const [user] = await sql('insert into users (tenant_id, email, name) values ($1, $2, $3) returning id', [owner.tenantId, `tie-member-${n}-${id.slice(0, 8)}@ties.test`, `Tie ${n}`]);
      await sql(`insert into organization_members (id, tenant_id, organization_id, user_id, role, joined_at) values ($1, $2, $3, $4, 'customer', $5)`, [id, owner.tenantId, owner.organizationId, user.id, SAME_MOMENT]);
    }
    const listed = await call(app.url, `/api/organizations/${owner.organizationId}/members?limit=200`, { apiKey: owner.apiKey });
    expect(listed.status, listed.text).toBe(200);
    expect(listedIds(listed.body.data.members, ids)).toEqual(ascending(ids));
  });

  it('GET /api/developer/api-keys lists them by id', async () => {
    const ids = descendingIds();
    for (const [n, id] of ids.entries()) {
      await sql('insert into api_keys (id, tenant_id, user_id, name, prefix, key_hash, created_at) values ($1, $2, $3, $4, $5, $6, $7)', [
        id, owner.tenantId, owner.userId, `tie ${n}`, `swk_tie${id.slice(0, 8)}`, randomBytes(32).toString('hex'), SAME_MOMENT,
      ]);
    }
    const listed = await call(app.url, '/api/developer/api-keys?limit=200', { apiKey: owner.apiKey });
    expect(listed.status, listed.text).toBe(200);
    expect(listedIds(listed.body.data.apiKeys, ids)).toEqual(ascending(ids));
  });

  it('GET /api/customer-invitations lists them by id', async () => {
    const ids = descendingIds();
    for (const [n, id] of ids.entries()) {
      await sql(
        `insert into customer_invitations (id, tenant_id, organization_id, email, token_hash, expires_at, invited_by, created_at) values ($1, $2, $3, $4, $5, now() + interval '7 days', $6, $7)`,
        [id, owner.tenantId, owner.organizationId, `tie-${n}-${id.slice(0, 8)}@invitee.test`, randomBytes(32).toString('hex'), owner.userId, SAME_MOMENT],
      );
    }
    const listed = await call(app.url, `/api/customer-invitations?organizationId=${owner.organizationId}&limit=200`, { apiKey: owner.apiKey });
    expect(listed.status, listed.text).toBe(200);
    expect(listedIds(listed.body.data.invitations, ids)).toEqual(ascending(ids));
  });

  it('GET /api/projects lists them by id', async () => {
    const ids = descendingIds();
    for (const [n, id] of ids.entries()) {
      await sql('insert into projects (id, tenant_id, organization_id, name, created_by, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $6)', [id, owner.tenantId, owner.organizationId, `Tie ${n}`, owner.userId, SAME_MOMENT]);
    }
    const listed = await call(app.url, '/api/projects?limit=200', { apiKey: owner.apiKey });
    expect(listed.status, listed.text).toBe(200);
    expect(listedIds(listed.body.data.projects, ids)).toEqual(ascending(ids));
  });

  it('GET /api/agency-projects lists them by id', async () => {
    const [project] = await sql('insert into projects (tenant_id, organization_id, name, created_by) values ($1, $2, $3, $4) returning id', [owner.tenantId, owner.organizationId, 'Shared', owner.userId]);
    const ids = descendingIds();
    for (const [n, id] of ids.entries()) {
      const [user] = await sql('insert into users (tenant_id, email, name) values ($1, $2, $3) returning id', [owner.tenantId, `tie-customer-${n}-${id.slice(0, 8)}@ties.test`, `Customer ${n}`]);
      await sql(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [owner.tenantId, owner.organizationId, user.id]);
      await sql('insert into agency_project_assignments (id, tenant_id, organization_id, project_id, customer_user_id, created_at) values ($1, $2, $3, $4, $5, $6)', [
        id, owner.tenantId, owner.organizationId, project.id, user.id, SAME_MOMENT,
      ]);
    }
    const listed = await call(app.url, `/api/agency-projects?organizationId=${owner.organizationId}&limit=200`, { apiKey: owner.apiKey });
    expect(listed.status, listed.text).toBe(200);
    expect(listedIds(listed.body.data.assignments, ids)).toEqual(ascending(ids));
  });
});
