import { sql, type Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database } from '../../db/database.ts';
import { notFound } from '../../errors/app-error.ts';

/**
 * The caller's name and email. Read by a definer function (migration 0014), not through row-level
 * security: a platform admin acting in another tenant (X-Tenant-ID) is still who they are there.
 */
async function identityOf(db: Kysely<Database>, userId: string): Promise<{ email: string; name: string } | undefined> {
  const { rows } = await sql<{ email: string; name: string }>`select * from app_private.user_identity(${userId})`.execute(db);
  return rows[0];
}

export async function describeCaller(db: Kysely<Database>, principal: Principal) {
  const user = await identityOf(db, principal.userId);
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
