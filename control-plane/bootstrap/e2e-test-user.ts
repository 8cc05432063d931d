import type { Kysely } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Database } from '../db/database.ts';
import { findFirstOrganizationOfTenant, findOldestTenant, findUserByEmail, insertMembership, insertUser } from '../domains/tenants/tenants.repository.ts';

export const E2E_TEST_USER_EMAIL = 'e2e-test@specwright.local';

/** The user `X-E2E-Test-Mode: true` acts as: an ordinary member of the first tenant, never an admin. */
export async function ensureE2eTestUser(owner: Kysely<Database>): Promise<Principal> {
  return owner.transaction().execute(async (trx) => {
    const tenant = await findOldestTenant(trx);
    if (!tenant) throw new Error('E2E test mode needs a tenant; first run has not happened');
    let user = await findUserByEmail(trx, E2E_TEST_USER_EMAIL);
    if (!user) {
      user = await insertUser(trx, { tenantId: tenant.id, email: E2E_TEST_USER_EMAIL, name: 'E2E test user', isPlatformAdmin: false });
      const organization = await findFirstOrganizationOfTenant(trx, tenant.id);
      if (organization) await insertMembership(trx, { tenantId: tenant.id, organizationId: organization.id, userId: user.id, role: 'member' });
    }
    return { userId: user.id, tenantId: user.tenant_id, homeTenantId: user.tenant_id, isPlatformAdmin: false, via: 'e2e_test_mode' };
  });
}
