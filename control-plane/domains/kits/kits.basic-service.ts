import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, KitStatus } from '../../db/database.ts';
import { AppError, notFound } from '../../errors/app-error.ts';
import { pagingOf, type BasicListQuery } from '../../basic/basic-paging.ts';
import { requireOrganizationRole } from '../organizations/organization-access.ts';
import { requireKitsEnabled } from './kit-access.ts';
import type { BasicKit } from './kits.basic-schema.ts';
import { findOrganizationKit, findTenantKit, listOrganizationKits, setKitStatus, type KitOrder, type OrganizationKitRow } from './kits.repository.ts';

/**
 * Variant A's kits (DESIGN §5.2): the kits of the caller's organizations — those they are an
 * owner, admin or member of; no built-in kit — with published for Variant B's active. Every route
 * asks for the tenant's kits_enabled flag, and reads by membership alone, as Variant B's kit routes
 * do: a platform admin acting in another tenant (X-Tenant-ID) is in none of its organizations.
 */

const basicStatusOf = { active: 'published', deprecated: 'deprecated', draft: 'draft' } as const satisfies Record<KitStatus, BasicKit['status']>;
const sortColumns = { createdAt: 'created_at', updatedAt: 'updated_at', name: 'display_name' } as const satisfies Record<string, KitOrder['column']>;

function toBasicKit(row: OrganizationKitRow): BasicKit {
  return {
    id: row.id,
    name: row.display_name,
    ...(row.description === '' ? {} : { description: row.description }),
    ...(row.version ? { version: row.version } : {}),
    status: basicStatusOf[row.status],
    metadata: { kitId: row.kit_id, kitType: row.kit_type, organizationId: row.organization_id!, platform: { name: row.platform_name, category: row.platform_category } },
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

async function requireBasicKit(db: Kysely<Database>, principal: Principal, id: string): Promise<OrganizationKitRow> {
  await requireKitsEnabled(db, principal.tenantId);
  const kit = await findOrganizationKit(db, principal, id);
  if (!kit) throw notFound('The kit');
  return kit;
}

export async function listBasicKits(db: Kysely<Database>, principal: Principal, query: BasicListQuery<keyof typeof sortColumns>) {
  await requireKitsEnabled(db, principal.tenantId);
  const { rows, total } = await listOrganizationKits(db, principal, { ...pagingOf(query), order: { column: sortColumns[query.sort], direction: query.order } });
  return { items: rows.map(toBasicKit), total, page: query.page, pageSize: query.pageSize };
}

export async function getBasicKit(db: Kysely<Database>, principal: Principal, id: string): Promise<BasicKit> {
  return toBasicKit(await requireBasicKit(db, principal, id));
}

/**
 * Publishes or deprecates the kit as PATCH /api/{orgId}/kits/{kitId} does (its organization's admins
 * and owners; a caller outside it hears NOT_FOUND, before any role is asked); no status, or the one
 * it has, changes nothing, updatedAt included. The status is written here rather than through
 * changeKitStatus, whose answer reads the kit's whole latest manifest (up to the upload limit) and
 * every version, none of which A's kit shows.
 */
export async function setBasicKitStatus(db: Kysely<Database>, principal: Principal, input: { id: string; status?: 'published' | 'deprecated' | undefined }): Promise<BasicKit> {
  const kit = await requireBasicKit(db, principal, input.id);
  // One removed from the organization since the read above hears what any non-member does.
  await requireOrganizationRole(db, principal, kit.organization_id!, 'admin').catch((error: unknown) => {
    throw error instanceof AppError && error.code === 'ORG_NOT_MEMBER' ? notFound('The kit') : error;
  });
  if (input.status === undefined || basicStatusOf[kit.status] === input.status) return toBasicKit(kit);
  await setKitStatus(db, kit.id, input.status === 'published' ? 'active' : 'deprecated');
  // Read again (the row is ours until commit): a version published since the read above shows.
  // Not by membership: a caller removed meanwhile has still changed it. Gone: its organization was deleted.
  const changed = await findTenantKit(db, principal.tenantId, kit.id);
  if (!changed) throw notFound('The kit');
  return toBasicKit(changed);
}
