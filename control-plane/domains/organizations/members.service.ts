import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, OrganizationRole } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/postgres-errors.ts';
import { conflict, forbidden, notFound } from '../../errors/app-error.ts';
import type { Paging } from '../../http/paging.ts';
import { insertMembership } from '../tenants/tenants.repository.ts';
import { findUserInTenant } from '../users/users.repository.ts';
import { lockInvitee, revokePendingInvitations } from '../invitations/invitations.repository.ts';
import { atLeast, outranks, requireOrganizationRole } from './organization-access.ts';
import type { Member } from './organizations.schema.ts';
import {
  countOwners,
  deleteAssignmentsOfCustomer,
  deleteMembership,
  findMemberWithUser,
  keepOwnerIdOnAnOwner,
  listMembers,
  lockMemberships,
  setMemberRole,
} from './organizations.repository.ts';

type MemberRow = NonNullable<Awaited<ReturnType<typeof findMemberWithUser>>>;

function memberRowToMember(row: MemberRow): Member {
  return { id: row.id, userId: row.user_id, role: row.role, joinedAt: row.joined_at.toISOString(), user: { name: row.name, email: row.email } };
}

export async function listOrganizationMembers(db: Kysely<Database>, principal: Principal, input: Paging & { id: string }) {
  await requireOrganizationRole(db, principal, input.id, 'member');
  const { rows, ...page } = await listMembers(db, principal.tenantId, input.id, input);
  return { members: rows.map(memberRowToMember), ...page };
}

/** Only an owner may hand out (or take away) the owner role; admins manage admins and members. */
function assertMayGrant(actorRole: OrganizationRole, role: OrganizationRole): void {
  if (role === 'owner' && actorRole !== 'owner') throw forbidden('Only an owner can make someone an owner');
}

/**
 * Locks the organization's memberships, then reads the caller's role: a change to memberships
 * acts on the caller's standing as it is once no other change can be running. Reading it first
 * let two owners remove (or demote) each other at once, each checked as an owner while the other
 * was removing them.
 */
async function lockMembershipsAsMember(db: Kysely<Database>, principal: Principal, organizationId: string, minimum: OrganizationRole) {
  await lockMemberships(db, organizationId);
  return requireOrganizationRole(db, principal, organizationId, minimum);
}

export async function addOrganizationMember(
  db: Kysely<Database>,
  principal: Principal,
  input: { id: string; userId: string; role: OrganizationRole },
): Promise<Member> {
  const { role: actorRole } = await lockMembershipsAsMember(db, principal, input.id, 'admin');
  assertMayGrant(actorRole, input.role);
  const user = await findUserInTenant(db, principal.tenantId, input.userId);
  if (!user) throw notFound('The user');
  // Membership and a pending invitation exclude each other: the invitation is closed, or it
  // would let the user back in after a removal.
  await lockInvitee(db, input.id, user.email);
  await revokePendingInvitations(db, principal.tenantId, input.id, { email: user.email });
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
  const { role: actorRole } = await lockMembershipsAsMember(db, principal, input.id, 'admin');
  const target = await findMemberWithUser(db, principal.tenantId, input.id, input.userId);
  if (!target) throw notFound('The member');
  if (target.user_id === principal.userId && outranks(input.role, target.role)) throw forbidden('Nobody can raise their own role');
  if (target.role === 'owner' && actorRole !== 'owner') throw forbidden("Only an owner can change an owner's role");
  assertMayGrant(actorRole, input.role);
  if (target.role === 'owner' && input.role !== 'owner' && (await countOwners(db, principal.tenantId, input.id)) <= 1) {
    throw conflict('The last owner cannot be demoted; make someone else an owner first');
  }
  // Updating the membership waits for assignments being made meanwhile (they share-lock it).
  await setMemberRole(db, principal.tenantId, input.id, input.userId, input.role);
  if (target.role === 'owner') await keepOwnerIdOnAnOwner(db, principal.tenantId, input.id);
  // Assignments are made to customers only; promoted, they see the organization's projects as
  // its members do, and the assignments would otherwise outlive the role that they were for.
  if (target.role === 'customer' && input.role !== 'customer') await deleteAssignmentsOfCustomer(db, principal.tenantId, input.id, input.userId);
  // Below admin they could no longer invite: the invitations they sent end here too.
  if (!atLeast(input.role, 'admin')) await revokePendingInvitations(db, principal.tenantId, input.id, { invitedBy: input.userId });
  return memberRowToMember({ ...target, role: input.role });
}

/**
 * Removes a membership (anyone may leave; admins remove others). What the membership granted goes
 * with it in the same transaction: a customer's project assignments in this organization, and the
 * pending invitations the member sent into it.
 */
export async function removeOrganizationMember(db: Kysely<Database>, principal: Principal, input: { id: string; userId: string }) {
  const leaving = input.userId === principal.userId;
  const { role: actorRole } = await lockMembershipsAsMember(db, principal, input.id, leaving ? 'customer' : 'admin');
  const target = await findMemberWithUser(db, principal.tenantId, input.id, input.userId);
  if (!target) throw notFound('The member');
  if (!leaving && target.role === 'owner' && actorRole !== 'owner') throw forbidden('Only an owner can remove an owner');
  if (target.role === 'owner' && (await countOwners(db, principal.tenantId, input.id)) <= 1) {
    throw conflict('The last owner cannot be removed; make someone else an owner first');
  }
  // The membership first: deleting it waits for assignments being made meanwhile (they share-lock
  // it), so the assignments deleted next include theirs. The other order left them behind.
  await deleteMembership(db, principal.tenantId, input.id, input.userId);
  await deleteAssignmentsOfCustomer(db, principal.tenantId, input.id, input.userId);
  await revokePendingInvitations(db, principal.tenantId, input.id, { invitedBy: input.userId });
  if (target.role === 'owner') await keepOwnerIdOnAnOwner(db, principal.tenantId, input.id);
  return { removed: true as const, userId: target.user_id };
}
