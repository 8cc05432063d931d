import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The owner-key reissue is for the owner a tenant's creation made, whose only key (in the lost
 * answer) was never used. Its organization's owner_id moves to another owner when that one leaves
 * (organizations.repository.ts keepOwnerIdOnAnOwner): that owner got in, and the user owner_id names
 * now is someone else, who never had a key to lose.
 */
let app: TestApp;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('POST /api/admin/tenants/{tenantId}/owner-key after the ownership moved', () => {
  it("is CONFLICT, issues no key for the organization's new owner, and revokes nothing", async () => {
    const tenant = await createTenant(app, 'Moved');
    // A user of the tenant with no credential yet (an identity-provider user who has not signed in).
    const [successor] = await sqlAsOwner('insert into users (tenant_id, email, name) values ($1, $2, $3) returning id', [tenant.tenantId, 'successor@moved.test', 'Successor']);
    const members = `/api/organizations/${tenant.organizationId}/members`;
    const added = await call(app.url, members, { apiKey: tenant.apiKey, body: { userId: successor.id, role: 'owner' } });
    expect(added.status, added.text).toBe(201);
    const left = await call(app.url, `${members}/${tenant.userId}`, { method: 'DELETE', apiKey: tenant.apiKey });
    expect(left.status, left.text).toBe(200);
    const [organization] = await sqlAsOwner('select owner_id from organizations where id = $1', [tenant.organizationId]);
    expect(organization.owner_id).toBe(successor.id);
    const keysBefore = await sqlAsOwner('select id, revoked_at from api_keys where tenant_id = $1 order by id', [tenant.tenantId]);

    const response = await call(app.url, `/api/admin/tenants/${tenant.tenantId}/owner-key`, { method: 'POST', apiKey: app.bootstrap.apiKey });
    expect([response.status, response.body.error?.code], response.text).toEqual([409, 'CONFLICT']);
    expect(response.text).not.toMatch(/swk_/);
    expect(await sqlAsOwner('select id, revoked_at from api_keys where tenant_id = $1 order by id', [tenant.tenantId])).toEqual(keysBefore);
    expect(await sqlAsOwner('select id from api_keys where user_id = $1', [successor.id])).toEqual([]);
  });
});
