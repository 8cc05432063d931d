import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database } from '../../db/database.ts';
import { notFound } from '../../errors/app-error.ts';
import { findUserIdentity } from '../users/users.repository.ts';

export async function describeCaller(db: Kysely<Database>, principal: Principal) {
  const user = await findUserIdentity(db, principal.userId);
  if (!user) throw notFound('The user');
  return {
    userId: principal.userId,
    tenantId: principal.tenantId,
    homeTenantId: principal.homeTenantId,
    email: user.email,
    name: user.name,
    isPlatformAdmin: principal.isPlatformAdmin,
    authenticatedBy: principal.via,
  };
}
