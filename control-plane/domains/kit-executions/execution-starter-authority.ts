import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { apiKeyIsActive } from '../api-keys/api-keys.service.ts';
import { atLeast } from '../organizations/organization-access.ts';
import { findMembership } from '../organizations/organizations.repository.ts';

/**
 * An execution runs on the authority of whoever started it, to the end: it was authorized when its
 * request started it, and a worker may run it much later (a queue, a retry). Removing the member
 * (or their leaving) and revoking the API key they started it with take that authority back at
 * once: the run they left queued does not run, and the one running is handed no further credential
 * (asked before each open and again after it, so a removal committed while one was being opened
 * is seen) and ends failed, its outcome asked once more before it is recorded. A removal
 * committed after that last check finds the run done.
 */
export type StarterWithdrawn = 'memberLeft' | 'keyRevoked';

/** Why whoever started the execution may no longer run it, or null while they may. */
export async function withdrawnAuthority(
  db: Kysely<Database>,
  tenantId: string,
  execution: { organization_id: string; created_by: string | null; started_with_api_key_id: string | null; created_at: Date },
): Promise<StarterWithdrawn | null> {
  const starter = execution.created_by;
  if (starter === null || !(await membershipStartedIt(db, tenantId, starter, execution))) return 'memberLeft';
  // A key that no longer exists has been revoked as surely.
  if (execution.started_with_api_key_id !== null && !(await apiKeyIsActive(db, { tenantId, userId: starter }, execution.started_with_api_key_id))) return 'keyRevoked';
  return null;
}

/**
 * Whether the starter still holds the membership they started the execution with: as
 * requireKitAccess asked of them then, a member or above, and joined no later than the execution
 * was made. A member removed and added again holds a new membership, which started nothing: the
 * runs the removal stopped stay stopped, however soon a worker reaches them.
 */
async function membershipStartedIt(db: Kysely<Database>, tenantId: string, userId: string, execution: { organization_id: string; created_at: Date }): Promise<boolean> {
  const membership = await findMembership(db, tenantId, execution.organization_id, userId);
  return membership !== undefined && atLeast(membership.role, 'member') && membership.joined_at.getTime() <= execution.created_at.getTime();
}
