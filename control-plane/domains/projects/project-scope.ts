import type { Principal } from '../../auth/principal.ts';
import type { ProjectScope } from './projects.repository.ts';

/**
 * Which projects a caller reaches: those of the organizations they are a member, admin or owner of,
 * plus those assigned to them as a customer (agency projects). A platform admin acting in another
 * tenant reaches all of that tenant's projects. Memberships are read by the query itself on every
 * call, so a removed membership or assignment counts at once.
 */
export function projectScopeFor(principal: Principal): ProjectScope {
  if (principal.isPlatformAdmin && principal.tenantId !== principal.homeTenantId) return { tenantId: principal.tenantId };
  return { tenantId: principal.tenantId, userId: principal.userId };
}
