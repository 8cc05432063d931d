import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database } from '../../db/database.ts';
import { notFound } from '../../errors/app-error.ts';
import { findUserInTenant } from '../users/users.repository.ts';

export async function describeCaller(db: Kysely<Database>, principal: Principal) {
  const user = await findUserInTenant(db, principal.homeTenantId, principal.userId);
  // A platform admin acting in another tenant cannot see their own row through RLS.
  if (!user && principal.tenantId === principal.homeTenantId) throw notFound('The user');
  return {
    userId: principal.userId,
    tenantId: principal.tenantId,
    homeTenantId: principal.homeTenantId,
    email: user?.email ?? '',
    name: user?.name ?? '',
    isPlatformAdmin: principal.isPlatformAdmin,
    authenticatedBy: principal.via,
  };
}
