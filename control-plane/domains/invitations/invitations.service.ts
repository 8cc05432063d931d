import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Principal } from '../../auth/principal.ts';
import type { Database } from '../../db/database.ts';
import { conflict, notFound } from '../../errors/app-error.ts';
import type { Paging } from '../../http/paging.ts';
import { holdsOrganizationRole, requireOrganizationRole } from '../organizations/organization-access.ts';
import { findMembership, lockMembershipsShared } from '../organizations/organizations.repository.ts';
import { generateInvitationToken, hashInvitationToken } from './invitation-token.ts';
import { INVITATION_LIFETIME_DAYS, type Invitation, type InvitationStatus } from './invitations.schema.ts';
import {
  findInvitationWithInviter,
  findPendingInvitation,
  findUserByEmailInTenant,
  insertInvitation,
  listInvitations,
  lockInvitation,
  lockInvitee,
  markRevoked,
  type InvitationListRow,
} from './invitations.repository.ts';

const iso = (value: Date | null) => value?.toISOString() ?? null;

function invitationRowToInvitation(row: InvitationListRow): Invitation {
  return {
    id: row.id,
    organizationId: row.organization_id,
    organization: { name: row.organization_name, displayName: row.organization_display_name },
    email: row.email,
    // The column also allows admin, which no route hands out yet.
    role: row.role === 'member' ? 'member' : 'customer',
    message: row.message,
    status: row.effective_status,
    expiresAt: row.expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    invitedBy: { id: row.invited_by, name: row.invited_by_name },
    acceptedBy: row.accepted_by,
    acceptedAt: iso(row.accepted_at),
    revokedAt: iso(row.revoked_at),
  };
}

/**
 * Invites an email into an organization (admins and owners). The token is returned here only; one
 * pending invitation per organization and email, and none for someone who is already a member.
 */
export async function createInvitation(
  db: Kysely<Database>,
  principal: Principal,
  input: { organizationId: string; email: string; message?: string | null | undefined; roleId?: 'customer' | 'member' | undefined },
): Promise<Invitation & { token: string }> {
  // The caller's standing is read once no change to the memberships can be running: an admin
  // being removed at this moment invites nobody (their pending invitations are revoked with them).
  await lockMembershipsShared(db, input.organizationId);
  await requireOrganizationRole(db, principal, input.organizationId, 'admin');
  await lockInvitee(db, input.organizationId, input.email);
  // The pending invitation first, the membership after: accepting one turns it from pending into a
  // membership in one commit, so one of the two checks sees it whenever that commit lands. The
  // other order let an acceptance committing between them pass both, inviting the new member again.
  const pending = await findPendingInvitation(db, principal.tenantId, input.organizationId, input.email);
  if (pending) throw conflict('A pending invitation for this email exists; revoke it to send a new one', { field: 'email', invitationId: pending.id });
  const existingUser = await findUserByEmailInTenant(db, principal.tenantId, input.email);
  if (existingUser && (await findMembership(db, principal.tenantId, input.organizationId, existingUser.id))) {
    throw conflict('This email belongs to a member of the organization already', { field: 'email' });
  }

  const { token, tokenHash } = generateInvitationToken();
  const { id } = await insertInvitation(db, {
    tenantId: principal.tenantId,
    organizationId: input.organizationId,
    email: input.email,
    role: input.roleId ?? 'customer',
    message: input.message || null,
    tokenHash,
    lifetimeDays: INVITATION_LIFETIME_DAYS,
    invitedBy: principal.userId,
  });
  const row = await findInvitationWithInviter(db, principal.tenantId, id);
  return { ...invitationRowToInvitation(row!), token };
}

export async function listOrganizationInvitations(
  db: Kysely<Database>,
  principal: Principal,
  input: Paging & { organizationId: string; status?: InvitationStatus | undefined },
) {
  await requireOrganizationRole(db, principal, input.organizationId, 'admin');
  const { rows, ...page } = await listInvitations(db, principal.tenantId, input.organizationId, input.status, input);
  return { invitations: rows.map(invitationRowToInvitation), ...page };
}

const uuid = z.uuid();

/**
 * Revokes a pending (or expired) invitation. The path names it by token or, since the token is
 * shown only once, by the id the list shows. Revoking twice answers the same; an accepted
 * invitation cannot be revoked (remove the member instead).
 *
 * Who may not revoke it learns no more than they knew: a token's holder can see the invitation on
 * its public page, so they are told why (ORG_NOT_MEMBER, FORBIDDEN); an id is seen only in the
 * admins' list, so anyone else gets what a missing id gets, NOT_FOUND.
 */
export async function revokeInvitation(db: Kysely<Database>, principal: Principal, tokenOrId: string) {
  const byId = uuid.safeParse(tokenOrId).success;
  const row = await lockInvitation(db, principal.tenantId, byId ? { id: tokenOrId } : { tokenHash: hashInvitationToken(tokenOrId) });
  if (!row) throw notFound('The invitation');
  if (!byId) await requireOrganizationRole(db, principal, row.organization_id, 'admin');
  else if (!(await holdsOrganizationRole(db, principal, row.organization_id, 'admin'))) throw notFound('The invitation');
  if (row.status === 'accepted') throw conflict('The invitation has been accepted already; remove the member instead');
  const revokedAt = row.status === 'revoked' ? row.revoked_at! : (await markRevoked(db, principal.tenantId, row.id)).revoked_at!;
  return { id: row.id, status: 'revoked' as const, revokedAt: revokedAt.toISOString() };
}
