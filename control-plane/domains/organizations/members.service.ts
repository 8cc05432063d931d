import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, OrganizationRole } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/postgres-errors.ts';
import { conflict, forbidden, notFound } from '../../errors/app-error.ts';
import { insertMembership } from '../tenants/tenants.repository.ts';
import { findUserInTenant } from '../users/users.repository.ts';
import { outranks, requireOrganizationRole } from './organization-access.ts';
import type { Member } from './organizations.schema.ts';
import {
  countOwners,
  deleteAssignmentsOfCustomer,
  deleteMembership,
  findMemberWithUser,
  listMembers,
  lockMemberships,
  setMemberRole,
} from './organizations.repository.ts';

type MemberRow = Awaited<ReturnType<typeof listMembers>>[number];

function memberRowToMember(row: MemberRow): Member {
  return { id: row.id, userId: row.user_id, role: row.role, joinedAt: row.joined_at.toISOString(), user: { name: row.name, email: row.email } };
}

export async function listOrganizationMembers(db: Kysely<Database>, principal: Principal, organizationId: string): Promise<{ members: Member[] }> {
  await requireOrganizationRole(db, principal, organizationId, 'member');
  return { members: (await listMembers(db, principal.tenantId, organizationId)).map(memberRowToMember) };
}

/** Only an owner may hand out (or take away) the owner role; admins manage admins and members. */
function assertMayGrant(actorRole: OrganizationRole, role: OrganizationRole): void {
  if (role === 'owner' && actorRole !== 'owner') throw forbidden('Only an owner can make someone an owner');
}

export async function addOrganizationMember(
  db: Kysely<Database>,
  principal: Principal,
  input: { id: string; userId: string; role: OrganizationRole },
): Promise<Member> {
  const { role: actorRole } = await requireOrganizationRole(db, principal, input.id, 'admin');
  assertMayGrant(actorRole, input.role);
  if (!(await findUserInTenant(db, principal.tenantId, input.userId))) throw notFound('The user');
  try {
    await insertMembership(db, { tenantId: principal.tenantId, organizationId: input.id, userId: input.userId, role: input.role });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('The user is already a member of this organization');
    throw error;
  }
  return memberRowToMember((await findMemberWithUser(db, principal.tenantId, input.id, input.userId))!);
}

export async function changeOrganizationMemberRole(
  db: Kysely<Database>,
  principal: Principal,
  input: { id: string; userId: string; role: OrganizationRole },
): Promise<Member> {
  const { role: actorRole } = await requireOrganizationRole(db, principal, input.id, 'admin');
  await lockMemberships(db, principal.tenantId, input.id);
  const target = await findMemberWithUser(db, principal.tenantId, input.id, input.userId);
  if (!target) throw notFound('The member');
  if (target.user_id === principal.userId && outranks(input.role, target.role)) throw forbidden('Nobody can raise their own role');
  if (target.role === 'owner' && actorRole !== 'owner') throw forbidden("Only an owner can change an owner's role");
  assertMayGrant(actorRole, input.role);
  if (target.role === 'owner' && input.role !== 'owner' && (await countOwners(db, principal.tenantId, input.id)) <= 1) {
    throw conflict('The last owner cannot be demoted; make someone else an owner first');
  }
  await setMemberRole(db, principal.tenantId, input.id, input.userId, input.role);
  return memberRowToMember({ ...target, role: input.role });
}

/**
 * Removes a membership (anyone may leave; admins remove others). What the membership granted goes
 * with it in the same transaction: a customer's project assignments in this organization.
 */
export async function removeOrganizationMember(db: Kysely<Database>, principal: Principal, input: { id: string; userId: string }) {
  const leaving = input.userId === principal.userId;
  const { role: actorRole } = await requireOrganizationRole(db, principal, input.id, leaving ? 'customer' : 'admin');
  await lockMemberships(db, principal.tenantId, input.id);
  const target = await findMemberWithUser(db, principal.tenantId, input.id, input.userId);
  if (!target) throw notFound('The member');
  if (!leaving && target.role === 'owner' && actorRole !== 'owner') throw forbidden('Only an owner can remove an owner');
  if (target.role === 'owner' && (await countOwners(db, principal.tenantId, input.id)) <= 1) {
    throw conflict('The last owner cannot be removed; make someone else an owner first');
  }
  await deleteAssignmentsOfCustomer(db, principal.tenantId, input.id, input.userId);
  await deleteMembership(db, principal.tenantId, input.id, input.userId);
  return { removed: true as const, userId: input.userId };
}
