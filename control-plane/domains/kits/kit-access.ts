import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, OrganizationRole } from '../../db/database.ts';
import { AppError, notFound } from '../../errors/app-error.ts';
import { requireOrganizationRole } from '../organizations/organization-access.ts';
import { getProjectForCaller } from '../projects/projects.service.ts';
import { findKit, tenantFeatures } from './kits.repository.ts';

export const KITS_FEATURE_FLAG = 'kits_enabled';

/** Whether the tenant's kits_enabled flag is on: every kit route asks, and every run as it starts. */
export async function kitsEnabledFor(db: Kysely<Database>, tenantId: string): Promise<boolean> {
  return (await tenantFeatures(db, tenantId))[KITS_FEATURE_FLAG] === true;
}

/** The tenant's kits_enabled flag is on, else FORBIDDEN naming it. */
export async function requireKitsEnabled(db: Kysely<Database>, tenantId: string): Promise<void> {
  if (!(await kitsEnabledFor(db, tenantId))) {
    throw new AppError('FORBIDDEN', `Kits are not enabled for this tenant: the feature flag ${KITS_FEATURE_FLAG} is off`, { featureFlag: KITS_FEATURE_FLAG });
  }
}

/** Every kit route: the tenant's kits_enabled flag, then the caller's role in the organization. */
export async function requireKitAccess(db: Kysely<Database>, principal: Principal, organizationId: string, minimum: OrganizationRole = 'member') {
  await requireKitsEnabled(db, principal.tenantId);
  return requireOrganizationRole(db, principal, organizationId, minimum);
}

/**
 * The project a kit route acts on or filters by: one the caller may see, of the organization in
 * the route. A project of another organization (even one the caller also belongs to) is NOT_FOUND
 * here, so no organization can run kits on, or plant credentials for, a project it does not own,
 * and a list filtered by such a project says so instead of answering an empty page.
 *
 * `forWrite` (the default): the project is key-share-locked until the caller's row referencing it
 * is written, so a delete racing that insert is NOT_FOUND here, never a foreign-key failure (a 500)
 * there. A list reads in a read-only transaction, which may take no row lock.
 */
export async function requireOrganizationProject(db: Kysely<Database>, principal: Principal, organizationId: string, projectId: string, use: 'forWrite' | 'forRead' = 'forWrite') {
  const project = await getProjectForCaller(db, principal, projectId, use === 'forWrite' ? 'keyShare' : undefined).catch((error) => {
    throw error instanceof AppError && error.code === 'NOT_FOUND' ? notFound('The project', { field: 'projectId' }) : error;
  });
  if (project.organizationId !== organizationId) throw notFound('The project', { field: 'projectId' });
  return project;
}

/**
 * The kit a list filters by (`?kitId=`): one the organization can read — its own or a built-in one.
 * Any other id (a typo, another organization's kit) is NOT_FOUND on field kitId, as a foreign
 * `?projectId=` is, so a caller who names the wrong kit hears so instead of reading an empty page.
 * Every execution and credential names a kit that reads so: kits are never deleted.
 */
export async function requireOrganizationKitFilter(db: Kysely<Database>, organizationId: string, kitId: string): Promise<void> {
  if (!(await findKit(db, organizationId, kitId))) throw notFound('The kit', { field: 'kitId' });
}
