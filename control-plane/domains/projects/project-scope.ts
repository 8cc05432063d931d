import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database } from '../../db/database.ts';
import type { ProjectScope } from './projects.repository.ts';
import { membershipRolesOfUser } from './projects.repository.ts';

/**
 * A customer — someone whose only memberships are customer memberships (agency clients invited
 * through customer invitations) — sees just the projects assigned to them. Everyone else in the
 * tenant sees the tenant's projects. Read on every call, so a removed membership counts at once.
 */
export async function projectScopeFor(db: Kysely<Database>, principal: Principal): Promise<ProjectScope & { isCustomer: boolean }> {
  if (principal.tenantId !== principal.homeTenantId) return { tenantId: principal.tenantId, isCustomer: false };
  const roles = await membershipRolesOfUser(db, principal.tenantId, principal.userId);
  const isCustomer = roles.length > 0 && roles.every((role) => role === 'customer');
  return isCustomer ? { tenantId: principal.tenantId, customerUserId: principal.userId, isCustomer } : { tenantId: principal.tenantId, isCustomer };
}
