import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, OrganizationRole } from '../../db/database.ts';
import { AppError } from '../../errors/app-error.ts';
import { requireOrganizationRole } from '../organizations/organization-access.ts';
import { tenantFeatures } from './kits.repository.ts';

export const KITS_FEATURE_FLAG = 'kits_enabled';

/** Every kit route: the tenant's kits_enabled flag, then the caller's role in the organization. */
export async function requireKitAccess(db: Kysely<Database>, principal: Principal, organizationId: string, minimum: OrganizationRole = 'member') {
  const features = await tenantFeatures(db, principal.tenantId);
  if (features[KITS_FEATURE_FLAG] !== true) {
    throw new AppError('FORBIDDEN', `Kits are not enabled for this tenant: the feature flag ${KITS_FEATURE_FLAG} is off`, { featureFlag: KITS_FEATURE_FLAG });
  }
  return requireOrganizationRole(db, principal, organizationId, minimum);
}
