import { sql, type Kysely } from 'kysely';
import type { Database, OrganizationRole } from '../../db/database.ts';
import { emailKey, emailKeyOf } from '../../db/email-key.ts';

export async function insertTenant(db: Kysely<Database>, values: { id: string; name: string; features: Record<string, boolean> }) {
  return db.insertInto('tenants').values({ id: values.id, name: values.name, features: JSON.stringify(values.features) }).returningAll().executeTakeFirstOrThrow();
}

export async function insertUser(
  db: Kysely<Database>,
  values: { tenantId: string; email: string; name: string; isPlatformAdmin: boolean; passwordHash?: string | null },
) {
  return db
    .insertInto('users')
    .values({ tenant_id: values.tenantId, email: values.email, name: values.name, is_platform_admin: values.isPlatformAdmin, password_hash: values.passwordHash ?? null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertOrganization(
  db: Kysely<Database>,
  values: { tenantId: string; name: string; slug: string; displayName: string | null; ownerId: string; settings?: Record<string, unknown> },
) {
  return db
    .insertInto('organizations')
    .values({
      tenant_id: values.tenantId,
      name: values.name,
      slug: values.slug,
      display_name: values.displayName,
      owner_id: values.ownerId,
      settings: JSON.stringify(values.settings ?? {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertMembership(db: Kysely<Database>, values: { tenantId: string; organizationId: string; userId: string; role: OrganizationRole }) {
  return db
    .insertInto('organization_members')
    .values({ tenant_id: values.tenantId, organization_id: values.organizationId, user_id: values.userId, role: values.role })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findOldestTenant(db: Kysely<Database>) {
  return db.selectFrom('tenants').selectAll().orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
}

export async function findUserByEmail(db: Kysely<Database>, email: string) {
  return db.selectFrom('users').selectAll().where(emailKeyOf('email'), '=', emailKey(email)).executeTakeFirst();
}

export async function findFirstOrganizationOfTenant(db: Kysely<Database>, tenantId: string) {
  return db.selectFrom('organizations').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
}

/**
 * A user of the tenant, locked for the rest of the transaction as countActiveApiKeysOfUserLocked
 * locks them (FOR NO KEY UPDATE), so work on their keys (a key issued, a key reissued) takes turns.
 */
export async function lockUserOfTenant(db: Kysely<Database>, tenantId: string, userId: string) {
  return db
    .selectFrom('users')
    .select(['id', 'password_hash', 'is_platform_admin', 'first_bearer_authenticated_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .forNoKeyUpdate()
    .executeTakeFirst();
}

export async function updateTenantFeatures(db: Kysely<Database>, tenantId: string, changes: Record<string, boolean>) {
  return db
    .updateTable('tenants')
    .set({ features: sql`features || ${JSON.stringify(changes)}::jsonb` })
    .where('id', '=', tenantId)
    .returning(['id', 'features'])
    .executeTakeFirst();
}
