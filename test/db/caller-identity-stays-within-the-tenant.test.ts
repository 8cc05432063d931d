import { beforeAll, describe, expect, it } from 'vitest';
import { inAppRoleTransaction } from '../helpers/app-role-sql.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * app_private.user_identity (0014) is for GET /api/me of a platform admin acting in another tenant,
 * whose own row row-level security hides there. It returned the email and name of any user at all.
 */
let database: TestDatabase;
let tenantA: string;
let userOfB: string;
let adminId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  const q = (text: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, text, values);
  const [a] = await q(`insert into tenants (name) values ('a') returning id`);
  const [b] = await q(`insert into tenants (name) values ('b') returning id`);
  const [platform] = await q(`insert into tenants (name) values ('platform') returning id`);
  [{ id: userOfB }] = await q(`insert into users (tenant_id, email, name) values ($1, 'bob@b.test', 'Bob') returning id`, [b.id]);
  [{ id: adminId }] = await q(`insert into users (tenant_id, email, name, is_platform_admin) values ($1, 'admin@platform.test', 'Admin', true) returning id`, [platform.id]);
  tenantA = a.id;
});

const identityInTenantA = (userId: string) =>
  inAppRoleTransaction(database.appUrl, tenantA, async (client) => (await client.query('select email, name from app_private.user_identity($1)', [userId])).rows);

describe('app_private.user_identity, in tenant A', () => {
  it("names no user of another tenant", async () => {
    // Before the fix: [{ email: 'bob@b.test', name: 'Bob' }].
    expect(await identityInTenantA(userOfB)).toEqual([]);
  });

  it('still names a platform admin (acting in A, whose own row is elsewhere)', async () => {
    expect(await identityInTenantA(adminId)).toEqual([{ email: 'admin@platform.test', name: 'Admin' }]);
  });
});
