import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, KitStatus, KitType } from '../../db/database.ts';
import { forbidden, notFound } from '../../errors/app-error.ts';
import type { Paging } from '../../http/paging.ts';
import { requireKitAccess } from './kit-access.ts';
import { publishKitVersion } from './kit-publication.ts';
import type { KitDetail, KitSummary } from './kits.schema.ts';
import { findKit, listKits, listVersions, setKitStatus, type KitListRow } from './kits.repository.ts';

type Manifest = { phases?: string[]; outputs?: unknown[] };

function kitRowToSummary(row: KitListRow): KitSummary {
  const manifest = (row.manifest ?? {}) as Manifest;
  return {
    id: row.id,
    kitId: row.kit_id,
    displayName: row.display_name,
    description: row.description,
    version: row.version ?? null,
    kitType: row.kit_type,
    status: row.status,
    platformName: row.platform_name,
    platformCategory: row.platform_category,
    supportedPhases: (manifest.phases ?? []) as KitSummary['supportedPhases'],
    outputCount: manifest.outputs?.length ?? 0,
    builtIn: row.organization_id === null,
    createdAt: row.created_at.toISOString(),
  };
}

export async function listKitsForOrganization(
  db: Kysely<Database>,
  principal: Principal,
  input: Paging & { orgId: string; type?: KitType | undefined; status?: KitStatus | undefined },
) {
  await requireKitAccess(db, principal, input.orgId);
  const { rows, total } = await listKits(db, input.orgId, input);
  return { kits: rows.map(kitRowToSummary), total, limit: input.limit, offset: input.offset };
}

export async function requireKit(db: Kysely<Database>, organizationId: string, kitId: string): Promise<KitListRow> {
  const kit = await findKit(db, organizationId, kitId);
  if (!kit) throw notFound(`The kit ${kitId}`);
  return kit;
}

export async function getKitForOrganization(db: Kysely<Database>, principal: Principal, input: { orgId: string; kitId: string }): Promise<KitDetail> {
  await requireKitAccess(db, principal, input.orgId);
  const kit = await requireKit(db, input.orgId, input.kitId);
  const versions = await listVersions(db, kit.id);
  return {
    ...kitRowToSummary(kit),
    manifest: kit.manifest ?? {},
    versions: versions.map((v) => ({ version: v.version, createdAt: v.created_at.toISOString() })),
  };
}

export async function publishKitForOrganization(
  db: Kysely<Database>,
  principal: Principal,
  input: { orgId: string; manifest: Record<string, unknown>; files: Record<string, string> },
) {
  await requireKitAccess(db, principal, input.orgId, 'admin');
  return publishKitVersion(db, { tenantId: principal.tenantId, organizationId: input.orgId }, input.manifest, input.files);
}

export async function changeKitStatus(db: Kysely<Database>, principal: Principal, input: { orgId: string; kitId: string; status: 'active' | 'deprecated' }): Promise<KitDetail> {
  await requireKitAccess(db, principal, input.orgId, 'admin');
  const kit = await requireKit(db, input.orgId, input.kitId);
  if (kit.organization_id === null) throw forbidden('Built-in kits are read-only');
  await setKitStatus(db, kit.id, input.status);
  return getKitForOrganization(db, principal, input);
}
