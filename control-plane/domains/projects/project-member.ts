import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, OrganizationRole, ProjectRow } from '../../db/database.ts';
import { forbidden } from '../../errors/app-error.ts';
import { requireOrganizationRole } from '../organizations/organization-access.ts';
import { projectScopeFor } from './project-scope.ts';

/**
 * For what a project's members, admins and owners do and its customers do not (move its flow,
 * compile its specification): the caller's role in the project's organization, or null for a
 * platform admin acting in the tenant. A customer is FORBIDDEN (naming the roles that may); a
 * project without an organization (only its organization's deletion leaves one so) is FORBIDDEN
 * to all but a platform admin, `doing` saying what.
 */
export async function requireProjectMember(db: Kysely<Database>, principal: Principal, project: ProjectRow, doing: string): Promise<OrganizationRole | null> {
  if (!projectScopeFor(principal).userId) return null;
  if (!project.organization_id) throw forbidden(`The project belongs to no organization: only a platform admin ${doing}`);
  return (await requireOrganizationRole(db, principal, project.organization_id, 'member')).role;
}
