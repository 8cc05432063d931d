import { beforeAll, describe, expect, it } from 'vitest';
import { asAppRoleInTenant } from '../helpers/app-role-sql.ts';
import { insertTenantWithUser } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * A platform admin acts in every tenant (X-Tenant-ID), so that flag is the one column of a tenant's
 * rows that reaches past the tenant. Only the first run, as the owner role, sets it; a request (the
 * app role) that could set it — a bug, an injection — would turn a tenant's user into everyone's.
 */
let database: TestDatabase;
let tenantId: string;
let userId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ tenantId, userId } = await insertTenantWithUser(database.ownerUrl));
});

/** `text` as a request of the tenant runs it, rolled back: the rows it reached, or the SQLSTATE it failed with. */
const asAppRole = (text: string, values: unknown[] = []) => asAppRoleInTenant(database.appUrl, tenantId, text, values);

describe('the platform admin flag, to the app role', () => {
  it('cannot be set on a user of the tenant', async () => {
    expect(await asAppRole('update users set is_platform_admin = true where id = $1', [userId])).toBe('42501');
  });

  it('cannot be given to a user it creates', async () => {
    expect(await asAppRole(`insert into users (tenant_id, email, name, is_platform_admin) values ($1, 'admin@example.test', 'a', true)`, [tenantId])).toBe('42501');
  });

  it('leaves what requests do with users alone: create them (not admins), rename them, replace a password hash, lock one', async () => {
    expect(await asAppRole(`insert into users (tenant_id, email, name, is_platform_admin) values ($1, 'plain@example.test', 'p', false)`, [tenantId])).toBe(1);
    expect(await asAppRole(`update users set name = 'v', email = 'v@example.test', password_hash = 'h' where id = $1`, [userId])).toBe(1);
    expect(await asAppRole('select id from users where id = $1 for update', [userId])).toBe(1);
  });
});
