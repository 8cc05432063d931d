import type { Kysely } from 'kysely';
import type { AuthOutcome } from '../../auth/authenticate.ts';
import type { Database } from '../../db/database.ts';
import { emailKey } from '../../db/email-key.ts';
import { isUniqueViolation } from '../../db/postgres-errors.ts';
import { withTenant } from '../../db/tenant-transaction.ts';
import { AppError, conflict, forbidden, notFound, unauthorized } from '../../errors/app-error.ts';
import { atLeast } from '../organizations/organization-access.ts';
import { findMembership } from '../organizations/organizations.repository.ts';
import { findUserInTenant } from '../users/users.repository.ts';
import { insertMembership } from '../tenants/tenants.repository.ts';
import { hashPassword } from '../users/password-hash.ts';
import { emailTaken, insertUserWithPassword } from '../users/users.repository.ts';
import { hashInvitationToken } from './invitation-token.ts';
import type { AcceptInvitationInput } from './invitations.schema.ts';
import {
  findInvitation,
  findInvitationByTokenHash,
  findPublicInvitation,
  findUserByEmailInTenant,
  lockInvitation,
  markAccepted,
  type InvitationLookup,
  type InvitationRow,
} from './invitations.repository.ts';

// These run on public routes: no tenant is known until the token names one, and then the work
// happens in a transaction pointed at that tenant, so row-level security still confines it.

async function lookUp(db: Kysely<Database>, token: string): Promise<InvitationLookup> {
  const found = await findInvitationByTokenHash(db, hashInvitationToken(token));
  if (!found) throw notFound('The invitation');
  return found;
}

/** What an invitee sees before accepting: who invites them where, and whether it still holds. */
export async function viewInvitation(db: Kysely<Database>, token: string) {
  const found = await lookUp(db, token);
  const row = await withTenant(db, found.tenant_id, (trx) => findPublicInvitation(trx, found.tenant_id, found.invitation_id));
  if (!row) throw notFound('The invitation');
  return {
    id: row.id,
    organization: { name: row.organization_name, displayName: row.organization_display_name },
    invitedBy: { name: row.invited_by_name },
    message: row.message,
    status: row.effective_status,
    expiresAt: row.expires_at.toISOString(),
  };
}

function assertAcceptable(row: InvitationRow): void {
  const status = row.effective_status;
  if (status === 'accepted') throw conflict('The invitation has been accepted already');
  if (status === 'revoked') throw conflict('The invitation has been revoked');
  if (status === 'expired') throw new AppError('INVITE_EXPIRED', 'The invitation has expired; ask for a new one');
}

/**
 * Whether the invitation can be accepted now (by a new user: whether its email is free). Checked
 * before a new user's password is hashed, and again under the invitation's lock. An invitation
 * lends out its inviter's standing: removal or demotion revokes what they sent, and this holds the
 * line for an invitation whose inviter lost the standing any other way.
 */
async function assertStillAcceptable(db: Kysely<Database>, tenantId: string, invitation: InvitationRow, byNewUser: boolean): Promise<void> {
  assertAcceptable(invitation);
  const inviter = await findMembership(db, tenantId, invitation.organization_id, invitation.invited_by);
  if (!inviter || !atLeast(inviter.role, 'admin')) throw conflict('The invitation has been revoked: the person who sent it can no longer invite');
  if (byNewUser && (await emailTaken(db, invitation.email))) {
    // Emails are unique across tenants and a user belongs to one: an account elsewhere can never
    // accept (as an existing user it is FORBIDDEN), so signing in is no way forward for it.
    if (!(await findUserByEmailInTenant(db, tenantId, invitation.email))) {
      throw conflict('An account with this email exists in another tenant, and a user belongs to one tenant only: ask for an invitation to another email');
    }
    throw conflict('An account with this email exists already; sign in and accept as that user (send userId)');
  }
}

/** The caller as an existing user of the invitation's tenant, or why they cannot accept as one. */
function existingUserOf(auth: AuthOutcome, userId: string, tenantId: string): string {
  if (auth.kind === 'rejected') throw auth.error;
  if (auth.kind !== 'authenticated') throw unauthorized('Accepting as an existing user needs authentication: send X-API-Key or Authorization: Bearer');
  if (auth.principal.userId !== userId) throw forbidden('userId must be the caller');
  if (auth.principal.homeTenantId !== tenantId) throw forbidden('This invitation is for another account');
  return userId;
}

/**
 * Accepts an invitation, atomically: the invitation row is locked, so of two concurrent accepts
 * exactly one succeeds and the other sees it accepted. A new user (name, password) is created in
 * the invitation's tenant with the invited email; an existing user must be the caller and have
 * that email. Either way the membership is created with the invited role.
 */
export async function acceptInvitation(db: Kysely<Database>, auth: AuthOutcome, input: AcceptInvitationInput) {
  // Credentials are optional here, not ignored: credentials sent that do not authenticate (two at
  // once, a revoked key, an expired token, another tenant's X-Tenant-ID) are refused as on every
  // route that takes them, before anything changes, whichever way the caller accepts.
  if (auth.kind === 'rejected') throw auth.error;
  const found = await lookUp(db, input.token);
  const existingUserId = input.userId === undefined ? undefined : existingUserOf(auth, input.userId, found.tenant_id);
  // Hashing is slow: do it before taking the row lock, and only for an invitation that can still
  // be accepted by a new user (checked again under the lock), so a token that cannot costs a
  // look-up, not a hash.
  let passwordHash: string | undefined;
  if (existingUserId === undefined) {
    await withTenant(db, found.tenant_id, async (trx) => {
      const invitation = await findInvitation(trx, found.tenant_id, { id: found.invitation_id });
      if (!invitation) throw notFound('The invitation');
      await assertStillAcceptable(trx, found.tenant_id, invitation, true);
    });
    passwordHash = await hashPassword(input.password!);
  }

  return withTenant(db, found.tenant_id, async (trx) => {
    const invitation = await lockInvitation(trx, found.tenant_id, { id: found.invitation_id });
    if (!invitation) throw notFound('The invitation');
    await assertStillAcceptable(trx, found.tenant_id, invitation, existingUserId === undefined);

    let userId: string;
    if (existingUserId !== undefined) {
      const user = await findUserInTenant(trx, found.tenant_id, existingUserId);
      if (!user) throw notFound('The user');
      if (emailKey(user.email) !== emailKey(invitation.email)) throw forbidden('This invitation was sent to another email address');
      if (await findMembership(trx, found.tenant_id, invitation.organization_id, user.id)) {
        throw conflict('You are a member of this organization already');
      }
      userId = user.id;
    } else {
      const user = await insertUserWithPassword(trx, { tenantId: found.tenant_id, email: invitation.email, name: input.name!, passwordHash: passwordHash! }).catch((error) => {
        throw isUniqueViolation(error, 'users_email_key') ? conflict('An account with this email exists already') : error;
      });
      userId = user.id;
    }
    const role: 'customer' | 'member' = invitation.role === 'member' ? 'member' : 'customer';
    // The check above cannot see a membership another transaction is adding meanwhile; the unique key can.
    await insertMembership(trx, { tenantId: found.tenant_id, organizationId: invitation.organization_id, userId, role }).catch((error) => {
      throw isUniqueViolation(error, 'organization_members_org_user_key') ? conflict('You are a member of this organization already') : error;
    });
    const { accepted_at } = await markAccepted(trx, found.tenant_id, invitation.id, userId);
    return {
      id: invitation.id,
      status: 'accepted' as const,
      organizationId: invitation.organization_id,
      userId,
      role,
      userCreated: existingUserId === undefined,
      acceptedAt: accepted_at!.toISOString(),
    };
  });
}
