import type { Kysely } from 'kysely';
import { requirePrincipal, type AuthOutcome } from '../../auth/authenticate.ts';
import type { Principal } from '../../auth/principal.ts';
import type { Database, KitStatus, KitType } from '../../db/database.ts';
import { inTenantTransaction } from '../../db/tenant-transaction.ts';
import { forbidden, notFound } from '../../errors/app-error.ts';
import { quotedId } from '../../errors/quoted-input.ts';
import type { Paging } from '../../http/paging.ts';
import { requireKitAccess } from './kit-access.ts';
import { storeKitVersion, validateKitPackageOffThread } from './kit-publication.ts';
import type { KitDetail, KitSummary } from './kits.schema.ts';
import { findKit, listKits, listVersions, setKitStatus, type KitListRow, type KitRow } from './kits.repository.ts';

function kitRowToSummary(row: KitListRow): KitSummary {
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
    supportedPhases: (row.phases ?? []) as KitSummary['supportedPhases'],
    outputCount: row.output_count ?? 0,
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
  const { rows, ...page } = await listKits(db, input.orgId, input);
  return { kits: rows.map(kitRowToSummary), ...page };
}

export async function requireKit(db: Kysely<Database>, organizationId: string, kitId: string): Promise<KitRow> {
  const kit = await findKit(db, organizationId, kitId);
  if (!kit) throw notFound(`The kit ${quotedId(kitId)}`);
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

/**
 * Publishes a kit version in two transactions around the package check: who may publish is settled
 * first (nobody else makes the service check a package), then the check runs on its threads
 * holding no database connection — a publish waiting for a checker thread inside its transaction
 * held one of the API pool's few — and the version is stored in a transaction of its own, which
 * checks the caller's standing again.
 */
export async function publishKitForOrganization(
  db: Kysely<Database>,
  auth: AuthOutcome,
  input: { orgId: string; manifest: Record<string, unknown>; files: Record<string, string> },
) {
  const principal = requirePrincipal(auth);
  const asAdmin = (trx: Kysely<Database>) => requireKitAccess(trx, principal, input.orgId, 'admin');
  await inTenantTransaction(db, principal.tenantId, { readOnly: true }, asAdmin);
  const manifest = await validateKitPackageOffThread(input.manifest, input.files);
  return inTenantTransaction(db, principal.tenantId, { readOnly: false }, async (trx) => {
    await asAdmin(trx);
    return storeKitVersion(trx, { tenantId: principal.tenantId, organizationId: input.orgId }, { manifest, manifestInput: input.manifest, files: input.files });
  });
}

export async function changeKitStatus(db: Kysely<Database>, principal: Principal, input: { orgId: string; kitId: string; status: 'active' | 'deprecated' }): Promise<KitDetail> {
  await requireKitAccess(db, principal, input.orgId, 'admin');
  const kit = await requireKit(db, input.orgId, input.kitId);
  if (kit.organization_id === null) throw forbidden('Built-in kits are read-only');
  await setKitStatus(db, kit.id, input.status);
  return getKitForOrganization(db, principal, input);
}
