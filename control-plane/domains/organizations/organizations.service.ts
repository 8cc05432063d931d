import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, OrganizationRow } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/postgres-errors.ts';
import { AppError, forbidden } from '../../errors/app-error.ts';
import type { Paging } from '../../http/paging.ts';
import { insertMembership, insertOrganization } from '../tenants/tenants.repository.ts';
import { requireOrganizationRole } from './organization-access.ts';
import type { Organization, OrganizationSettings } from './organizations.schema.ts';
import { defaultOrganizationOfUser, listOrganizationsOfUser, slugTaken, updateOrganization } from './organizations.repository.ts';

export function organizationRowToOrganization(row: OrganizationRow): Organization {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    slug: row.slug,
    displayName: row.display_name,
    ownerId: row.owner_id,
    settings: row.settings,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const slugTakenError = (slug: string) => new AppError('SLUG_TAKEN', `The slug "${slug}" is already taken`, { field: 'slug' });

/** Slugs are unique platform-wide; the unique index settles races the pre-check cannot see. */
async function guardSlug<T>(slug: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'organizations_slug_key')) throw slugTakenError(slug);
    throw error;
  }
}

export async function createOrganization(
  db: Kysely<Database>,
  principal: Principal,
  input: { name: string; slug: string; displayName?: string | null | undefined; settings?: OrganizationSettings | undefined },
): Promise<Organization> {
  // Its creator becomes its owner, and a user belongs to one tenant only.
  if (principal.tenantId !== principal.homeTenantId) {
    throw forbidden('An organization is founded by a user of its own tenant; acting in another tenant (X-Tenant-ID), a platform admin cannot own one there');
  }
  // A tenant is an agency's account: its customers see the projects assigned to them, and founding
  // an organization there would give them one of their own, with its projects, invitations and kit
  // runs on the agency's account. So do users no organization holds any more (removed everywhere).
  if ((await defaultOrganizationOfUser(db, principal.tenantId, principal.userId)) === undefined) {
    throw forbidden('Only a member, admin or owner of an organization of this tenant may found another; customers, and users no organization holds, may not');
  }
  if (await slugTaken(db, input.slug)) throw slugTakenError(input.slug);
  const row = await guardSlug(input.slug, () =>
    insertOrganization(db, {
      tenantId: principal.tenantId,
      name: input.name,
      slug: input.slug,
      displayName: input.displayName ?? null,
      ownerId: principal.userId,
      settings: input.settings ?? {},
    }),
  );
  await insertMembership(db, { tenantId: principal.tenantId, organizationId: row.id, userId: principal.userId, role: 'owner' });
  return organizationRowToOrganization(row);
}

export async function listMyOrganizations(db: Kysely<Database>, principal: Principal, paging: Paging) {
  const { rows, ...page } = await listOrganizationsOfUser(db, principal.tenantId, principal.userId, paging);
  return { organizations: rows.map(organizationRowToOrganization), ...page };
}

export async function getOrganization(db: Kysely<Database>, principal: Principal, id: string): Promise<Organization> {
  const { organization } = await requireOrganizationRole(db, principal, id, 'customer');
  return organizationRowToOrganization(organization);
}

export async function changeOrganization(
  db: Kysely<Database>,
  principal: Principal,
  input: { id: string; name?: string | undefined; slug?: string | undefined; displayName?: string | null | undefined; settings?: OrganizationSettings | undefined },
): Promise<Organization> {
  const { organization } = await requireOrganizationRole(db, principal, input.id, 'admin');
  // A PUT that names no field changes nothing, `updatedAt` included: it answers the organization as it is.
  if ([input.name, input.slug, input.displayName, input.settings].every((field) => field === undefined)) return organizationRowToOrganization(organization);
  if (input.slug !== undefined && input.slug !== organization.slug && (await slugTaken(db, input.slug))) throw slugTakenError(input.slug);
  const row = await guardSlug(input.slug ?? organization.slug, () =>
    updateOrganization(db, principal.tenantId, input.id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.slug !== undefined ? { slug: input.slug } : {}),
      ...(input.displayName !== undefined ? { display_name: input.displayName } : {}),
      ...(input.settings !== undefined ? { settings: JSON.stringify(input.settings) } : {}),
    }),
  );
  return organizationRowToOrganization(row);
}

export async function checkSlug(db: Kysely<Database>, slug: string) {
  return { slug, available: !(await slugTaken(db, slug)) };
}

