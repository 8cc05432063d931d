import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, OrganizationRole, OrganizationRow } from '../../db/database.ts';
import { AppError, notFound } from '../../errors/app-error.ts';
import { findMembership, findOrganization } from './organizations.repository.ts';

const rank: Record<OrganizationRole, number> = { customer: 0, member: 1, admin: 2, owner: 3 };

export function outranks(role: OrganizationRole, other: OrganizationRole): boolean {
  return rank[role] > rank[other];
}

export function atLeast(role: OrganizationRole, minimum: OrganizationRole): boolean {
  return rank[role] >= rank[minimum];
}

export interface OrganizationAccess {
  organization: OrganizationRow;
  role: OrganizationRole;
}

/**
 * The caller's standing in an organization, read fresh on every call (so a removed member loses
 * access at once). Another tenant's organization is NOT_FOUND; a non-member gets ORG_NOT_MEMBER;
 * a member below `minimum` gets FORBIDDEN naming the roles that may.
 */
export async function requireOrganizationRole(
  db: Kysely<Database>,
  principal: Pick<Principal, 'tenantId' | 'userId'>,
  organizationId: string,
  minimum: OrganizationRole = 'customer',
): Promise<OrganizationAccess> {
  const organization = await findOrganization(db, principal.tenantId, organizationId);
  if (!organization) throw notFound('The organization');
  const membership = await findMembership(db, principal.tenantId, organizationId, principal.userId);
  if (!membership) throw new AppError('ORG_NOT_MEMBER', 'You are not a member of this organization');
  if (!atLeast(membership.role, minimum)) {
    const allowed = (Object.keys(rank) as OrganizationRole[]).filter((role) => atLeast(role, minimum));
    throw new AppError('FORBIDDEN', `This needs the role ${allowed.join(' or ')} in the organization`);
  }
  return { organization, role: membership.role };
}

/**
 * Whether the caller holds at least `minimum` in the organization, for routes that name a row of
 * an organization (an assignment, an invitation) by id alone: a caller without the role gets the
 * row's NOT_FOUND, so the answer does not tell them the id exists (see requireOrganizationRole for
 * routes that name the organization themselves).
 */
export async function holdsOrganizationRole(
  db: Kysely<Database>,
  principal: Pick<Principal, 'tenantId' | 'userId'>,
  organizationId: string,
  minimum: OrganizationRole,
): Promise<boolean> {
  const membership = await findMembership(db, principal.tenantId, organizationId, principal.userId);
  return membership !== undefined && atLeast(membership.role, minimum);
}
