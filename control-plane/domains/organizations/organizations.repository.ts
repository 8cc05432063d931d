import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { databaseNow } from '../../db/database-clock.ts';
import type { Database, OrganizationRole, OrganizationUpdate } from '../../db/database.ts';
import { pagedRows } from '../../db/paged-rows.ts';
import type { Paging } from '../../http/paging.ts';

export async function slugTaken(db: Kysely<Database>, slug: string): Promise<boolean> {
  const { rows } = await sql<{ taken: boolean }>`select app_private.slug_taken(${slug}) as taken`.execute(db);
  return rows[0]?.taken === true;
}

export async function findOrganization(db: Kysely<Database>, tenantId: string, id: string) {
  return db.selectFrom('organizations').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function listOrganizationsOfUser(db: Kysely<Database>, tenantId: string, userId: string, paging: Paging) {
  const base = db
    .selectFrom('organizations as o')
    .innerJoin('organization_members as m', 'm.organization_id', 'o.id')
    .where('o.tenant_id', '=', tenantId)
    .where('m.user_id', '=', userId);
  return pagedRows(base.selectAll('o').orderBy('o.created_at').orderBy('o.id'), base, paging);
}

export async function updateOrganization(db: Kysely<Database>, tenantId: string, id: string, changes: OrganizationUpdate) {
  return db
    .updateTable('organizations')
    .set({ ...changes, updated_at: databaseNow })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The organizations a user is an owner, admin or member of (a customer's are not among them), as a query of their ids. */
export function organizationIdsOfMember(db: Kysely<Database>, tenantId: string, userId: string) {
  return db.selectFrom('organization_members').select('organization_id').where('tenant_id', '=', tenantId).where('user_id', '=', userId).where('role', 'in', ['owner', 'admin', 'member']);
}

/**
 * The organization the user joined first as member or above (their oldest membership): where a
 * project lands when its caller names none. Undefined for a customer, or a user no organization holds, who may found none either.
 */
export async function defaultOrganizationOfUser(db: Kysely<Database>, tenantId: string, userId: string): Promise<string | undefined> {
  const row = await organizationIdsOfMember(db, tenantId, userId)
    .orderBy('joined_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row?.organization_id;
}

export async function findMembership(db: Kysely<Database>, tenantId: string, organizationId: string, userId: string) {
  return db
    .selectFrom('organization_members')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

const membershipsLockKey = (organizationId: string) => `organization-members:${organizationId}`;

/**
 * Serialises membership changes of one organization for the rest of the transaction; every change
 * to its memberships takes it. An advisory lock, not row locks: locking every membership row FOR
 * UPDATE took them in whatever order each scan met them (updates move rows), so concurrent changes
 * deadlocked; and it leaves foreign-key checks alone, so an invitation being accepted meanwhile
 * never waits on it.
 */
export async function lockMemberships(db: Kysely<Database>, organizationId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${membershipsLockKey(organizationId)}, 0))`.execute(db);
}

/**
 * The shared form: work that acts on a member's standing (an admin inviting) waits for a
 * membership change being made, and holds one off until it commits; it does not wait for others
 * of its kind.
 */
export async function lockMembershipsShared(db: Kysely<Database>, organizationId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock_shared(hashtextextended(${membershipsLockKey(organizationId)}, 0))`.execute(db);
}

/**
 * Keeps `organizations.owner_id` naming an owner: when the user it names is no longer one (demoted
 * or gone), the longest-standing owner takes it. The last owner can never leave, so one remains.
 */
export async function keepOwnerIdOnAnOwner(db: Kysely<Database>, tenantId: string, organizationId: string): Promise<void> {
  const owners = (eb: ExpressionBuilder<Database, 'organizations'>) =>
    eb.selectFrom('organization_members').select('user_id').where('tenant_id', '=', tenantId).where('organization_id', '=', organizationId).where('role', '=', 'owner');
  await db
    .updateTable('organizations')
    .set((eb) => ({ owner_id: owners(eb).orderBy('joined_at').orderBy('id').limit(1) }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', organizationId)
    .where((eb) => eb('owner_id', 'not in', owners(eb)))
    .execute();
}

export async function countOwners(db: Kysely<Database>, tenantId: string, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('organization_members')
    .select((eb) => eb.fn.countAll<number>().as('owners'))
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.owners);
}

/** Memberships of one organization with the member's name and email. */
function membersWithUsers(db: Kysely<Database>, tenantId: string, organizationId: string) {
  return db
    .selectFrom('organization_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.id', 'm.user_id', 'm.role', 'm.joined_at', 'u.name', 'u.email'])
    .where('m.tenant_id', '=', tenantId)
    .where('m.organization_id', '=', organizationId);
}

export async function listMembers(db: Kysely<Database>, tenantId: string, organizationId: string, paging: Paging) {
  const members = membersWithUsers(db, tenantId, organizationId);
  return pagedRows(members.orderBy('m.joined_at').orderBy('m.id'), members.clearSelect(), paging);
}

export async function findMemberWithUser(db: Kysely<Database>, tenantId: string, organizationId: string, userId: string) {
  return membersWithUsers(db, tenantId, organizationId).where('m.user_id', '=', userId).executeTakeFirst();
}

export async function setMemberRole(db: Kysely<Database>, tenantId: string, organizationId: string, userId: string, role: OrganizationRole) {
  await db
    .updateTable('organization_members')
    .set({ role })
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .execute();
}

export async function deleteMembership(db: Kysely<Database>, tenantId: string, organizationId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('organization_members')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .execute();
}

export async function deleteAssignmentsOfCustomer(db: Kysely<Database>, tenantId: string, organizationId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('agency_project_assignments')
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('customer_user_id', '=', userId)
    .execute();
}
