import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { AgencyProjectAssignmentRow, Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/postgres-errors.ts';
import { conflict, invalid, notFound } from '../../errors/app-error.ts';
import type { Paging } from '../../http/paging.ts';
import { holdsOrganizationRole, requireOrganizationRole } from '../organizations/organization-access.ts';
import { findUserInTenant } from '../users/users.repository.ts';
import type { Assignment } from './agency-projects.schema.ts';
import { projectScopeFor } from '../projects/project-scope.ts';
import { findProject } from '../projects/projects.repository.ts';
import { deleteAssignment, findAssignment, insertAssignment, listAssignments, lockMembershipForShare } from './agency-projects.repository.ts';

function assignmentRowToAssignment(row: AgencyProjectAssignmentRow): Assignment {
  return {
    id: row.id,
    organizationId: row.organization_id,
    projectId: row.project_id,
    customerUserId: row.customer_user_id,
    createdAt: row.created_at.toISOString(),
  };
}

export async function listOrganizationAssignments(db: Kysely<Database>, principal: Principal, input: Paging & { organizationId: string }) {
  await requireOrganizationRole(db, principal, input.organizationId, 'admin');
  const { rows, ...page } = await listAssignments(db, principal.tenantId, input.organizationId, input);
  return { assignments: rows.map(assignmentRowToAssignment), ...page };
}

/**
 * Assigns one of the organization's projects to one of its customers (admins and owners), which
 * lets that customer see the project. Unknown ids (or another tenant's) are NOT_FOUND, and so is a
 * project the caller cannot see, as on the projects routes, so the answer never confirms that it
 * exists; a project of another organization that the caller sees, or a user who is not a customer
 * of this one, is a VALIDATION_ERROR.
 */
export async function assignProject(
  db: Kysely<Database>,
  principal: Principal,
  input: { organizationId: string; projectId: string; customerUserId: string },
): Promise<Assignment> {
  await requireOrganizationRole(db, principal, input.organizationId, 'admin');
  // Key-share-locked: a delete racing the assignment's insert reads as not found here.
  const project = await findProject(db, projectScopeFor(principal), input.projectId, { lock: 'keyShare' });
  if (!project) throw notFound('The project');
  if (project.organization_id !== input.organizationId) {
    throw invalid('The project does not belong to this organization', { issues: [{ field: 'projectId', issue: 'is a project of another organization' }] });
  }
  if (!(await findUserInTenant(db, principal.tenantId, input.customerUserId))) throw notFound('The customer');
  const membership = await lockMembershipForShare(db, principal.tenantId, input.organizationId, input.customerUserId);
  if (membership?.role !== 'customer') {
    throw invalid('Projects are assigned to customers: the user must be a member of the organization with the role customer', {
      issues: [{ field: 'customerUserId', issue: membership ? `has the role ${membership.role}, not customer` : 'is not a member of the organization' }],
    });
  }
  try {
    const row = await insertAssignment(db, { tenantId: principal.tenantId, ...input });
    return assignmentRowToAssignment(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict('The project is assigned to this customer already');
    throw error;
  }
}

/**
 * Removes an assignment (admins and owners of its organization). The path names the assignment
 * alone, so whoever may not remove it gets what a missing id gets: NOT_FOUND, never a FORBIDDEN
 * that would confirm the id exists.
 */
export async function unassignProject(db: Kysely<Database>, principal: Principal, id: string) {
  const assignment = await findAssignment(db, principal.tenantId, id);
  if (!assignment || !(await holdsOrganizationRole(db, principal, assignment.organization_id, 'admin'))) throw notFound('The assignment');
  if (!(await deleteAssignment(db, principal.tenantId, id))) throw notFound('The assignment');
  return { id, deleted: true as const };
}
