import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { pagedRows } from '../../db/paged-rows.ts';
import type { Paging } from '../../http/paging.ts';

export async function listAssignments(db: Kysely<Database>, tenantId: string, organizationId: string, paging: Paging) {
  const base = db.selectFrom('agency_project_assignments').where('tenant_id', '=', tenantId).where('organization_id', '=', organizationId);
  return pagedRows(base.selectAll().orderBy('created_at').orderBy('id'), base, paging);
}

export async function findAssignment(db: Kysely<Database>, tenantId: string, id: string) {
  return db.selectFrom('agency_project_assignments').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function insertAssignment(db: Kysely<Database>, values: { tenantId: string; organizationId: string; projectId: string; customerUserId: string }) {
  return db
    .insertInto('agency_project_assignments')
    .values({ tenant_id: values.tenantId, organization_id: values.organizationId, project_id: values.projectId, customer_user_id: values.customerUserId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Whether this call deleted it: of two concurrent deletes, one finds nothing left. */
export async function deleteAssignment(db: Kysely<Database>, tenantId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('agency_project_assignments').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * The user's membership, share-locked: removing the member (which deletes their assignments)
 * waits for this transaction, so no assignment outlives the membership it needs.
 */
export async function lockMembershipForShare(db: Kysely<Database>, tenantId: string, organizationId: string, userId: string) {
  return db
    .selectFrom('organization_members')
    .select(['id', 'role'])
    .where('tenant_id', '=', tenantId)
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .forShare()
    .executeTakeFirst();
}
