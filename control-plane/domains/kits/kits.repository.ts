import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { databaseNow } from '../../db/database-clock.ts';
import type { Database, KitStatus, KitType } from '../../db/database.ts';
import { pagedRows } from '../../db/paged-rows.ts';
import type { Paging } from '../../http/paging.ts';
import { organizationIdsOfMember } from '../organizations/organizations.repository.ts';

export async function tenantFeatures(db: Kysely<Database>, tenantId: string): Promise<Record<string, boolean>> {
  const row = await db.selectFrom('tenants').select('features').where('id', '=', tenantId).executeTakeFirst();
  return row?.features ?? {};
}

/**
 * Kits an organization can use: its own and the built-in ones, with their latest version. A
 * built-in kit whose id the organization's own kit has (published before a release shipped it) is
 * left out: the organization reads, runs and deprecates its own under that id, never the built-in.
 */
function kitsVisibleTo(db: Kysely<Database>, organizationId: string) {
  return db
    .selectFrom('kits as k')
    .leftJoin('kit_versions as v', 'v.id', 'k.latest_version_id')
    .where((eb) =>
      eb.or([
        eb('k.organization_id', '=', organizationId),
        eb.and([
          eb('k.organization_id', 'is', null),
          eb.not(eb.exists(eb.selectFrom('kits as own').select('own.id').where('own.organization_id', '=', organizationId).whereRef('own.kit_id', '=', 'k.kit_id'))),
        ]),
      ]),
    );
}

/**
 * A composite's component, as the organization that runs the composite sees it: its own kit of
 * that id, else the built-in one; the named version, else the latest. Nothing selected yet: a run
 * reads the package (findComponentVersion), a publish only whether it is there.
 */
export function componentVersionQuery(db: Kysely<Database>, owner: { tenantId: string; organizationId: string }, component: { kitId: string; version?: string | undefined }) {
  const query = db
    .selectFrom('kits as k')
    .innerJoin('kit_versions as v', 'v.kit_row_id', 'k.id')
    .where('k.kit_id', '=', component.kitId)
    .where(runnableBy(owner));
  return (component.version ? query.where('v.version', '=', component.version) : query.whereRef('v.id', '=', 'k.latest_version_id'))
    .orderBy('k.organization_id', (ob) => ob.asc().nullsLast())
    .limit(1);
}

/** Kits the organization can run: its own and the built-in ones. */
function runnableBy(owner: { tenantId: string; organizationId: string }) {
  return (eb: ExpressionBuilder<{ k: Database['kits'] }, 'k'>) =>
    eb.or([eb.and([eb('k.tenant_id', '=', owner.tenantId), eb('k.organization_id', '=', owner.organizationId)]), eb('k.organization_id', 'is', null)]);
}

/**
 * Every version of a kit the organization can run whose components name `kitId` (pinned or not):
 * the composites a new version of that kit could reach. `isLatest`: unpinned names of it resolve here.
 */
export async function findCompositeVersionsNaming(db: Kysely<Database>, owner: { tenantId: string; organizationId: string }, kitId: string) {
  return db
    .selectFrom('kits as k')
    .innerJoin('kit_versions as v', 'v.kit_row_id', 'k.id')
    .select(['k.kit_id', 'v.version', 'v.manifest'])
    .select(sql<boolean>`v.id = k.latest_version_id`.as('is_latest'))
    .where(runnableBy(owner))
    .where(sql<boolean>`v.manifest -> 'components' @> ${JSON.stringify([{ kitId }])}::jsonb`)
    .execute();
}

/**
 * Holds the organization's kit of that id (if any) until the transaction ends, so a publish that
 * checks it as a component and a publish of a new version of it (which holds it FOR UPDATE) take
 * turns, and the later one checks against what the earlier stored.
 */
export async function lockOwnKitForShare(db: Kysely<Database>, organizationId: string, kitId: string) {
  await db.selectFrom('kits').select('id').where('organization_id', '=', organizationId).where('kit_id', '=', kitId).forShare().execute();
}

/** The manifest a run of a composite would load for this component (`componentVersionQuery`); undefined when it would find none. */
export async function findComponentManifest(db: Kysely<Database>, owner: { tenantId: string; organizationId: string }, component: { kitId: string; version?: string | undefined }) {
  return (await componentVersionQuery(db, owner, component).select('v.manifest').executeTakeFirst())?.manifest;
}

const kitColumns = [
  'k.id', 'k.tenant_id', 'k.organization_id', 'k.kit_id', 'k.display_name', 'k.description', 'k.kit_type', 'k.status',
  'k.platform_name', 'k.platform_category', 'k.created_at', 'v.version', 'v.id as version_id',
] as const;

/**
 * What a kit's summary shows of its latest manifest: its phases and how many outputs it declares.
 * Read in the database, so a list does not carry each kit's whole manifest (up to the upload limit,
 * 10 MiB, each) from the database to the API to answer a few words per kit.
 */
const manifestSummaryColumns = [
  sql<string[] | null>`v.manifest -> 'phases'`.as('phases'),
  sql<number | null>`case when jsonb_typeof(v.manifest -> 'outputs') = 'array' then jsonb_array_length(v.manifest -> 'outputs') end`.as('output_count'),
] as const;

export async function listKits(db: Kysely<Database>, organizationId: string, filter: Paging & { type?: KitType | undefined; status?: KitStatus | undefined }) {
  let query = kitsVisibleTo(db, organizationId);
  if (filter.type) query = query.where('k.kit_type', '=', filter.type);
  if (filter.status) query = query.where('k.status', '=', filter.status);
  return pagedRows(query.select(kitColumns).select(manifestSummaryColumns).orderBy('k.created_at').orderBy('k.id'), query, filter);
}

export async function findKit(db: Kysely<Database>, organizationId: string, kitId: string) {
  // One at most: kitsVisibleTo leaves out a built-in kit the organization's own kit of that id overrides.
  return kitsVisibleTo(db, organizationId).select(kitColumns).select(manifestSummaryColumns).select('v.manifest').where('k.kit_id', '=', kitId).executeTakeFirst();
}

/** A listed kit; `findKit` adds its latest manifest. */
export type KitListRow = Awaited<ReturnType<typeof listKits>>['rows'][number];
export type KitRow = NonNullable<Awaited<ReturnType<typeof findKit>>>;

export async function listVersions(db: Kysely<Database>, kitRowId: string) {
  return db.selectFrom('kit_versions').select(['version', 'created_at']).where('kit_row_id', '=', kitRowId).orderBy('created_at').orderBy('id').execute();
}

/** The version a kit's latest_version_id points at; undefined before its first version. */
export async function findLatestVersion(db: Kysely<Database>, kitRowId: string) {
  return db.selectFrom('kits as k').innerJoin('kit_versions as v', 'v.id', 'k.latest_version_id').select(['v.id', 'v.version']).where('k.id', '=', kitRowId).executeTakeFirst();
}

export async function findBuiltInKitId(db: Kysely<Database>, kitId: string) {
  return db.selectFrom('kits').select('id').where('kit_id', '=', kitId).where('organization_id', 'is', null).executeTakeFirst();
}

export async function findOwnKitForUpdate(db: Kysely<Database>, organizationId: string, kitId: string) {
  return db.selectFrom('kits').selectAll().where('organization_id', '=', organizationId).where('kit_id', '=', kitId).forUpdate().executeTakeFirst();
}

export interface KitFields {
  kitId: string;
  displayName: string;
  description: string;
  kitType: KitType;
  platformName: string;
  platformCategory: string;
}

function kitRowValues(owner: { tenantId: string | null; organizationId: string | null }, fields: KitFields) {
  return {
    tenant_id: owner.tenantId,
    organization_id: owner.organizationId,
    kit_id: fields.kitId,
    display_name: fields.displayName,
    description: fields.description,
    kit_type: fields.kitType,
    platform_name: fields.platformName,
    platform_category: fields.platformCategory,
  };
}

export async function insertKit(db: Kysely<Database>, owner: { tenantId: string | null; organizationId: string | null }, fields: KitFields) {
  return db
    .insertInto('kits')
    .values(kitRowValues(owner, fields))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * An organization's kit row, created if it does not exist yet, locked for the rest of the
 * transaction. Of two first publishes racing (two versions of a new kit), the second waits for the
 * first's row and uses it, instead of failing on the unique index.
 */
export async function createOwnKitOrLock(db: Kysely<Database>, owner: { tenantId: string; organizationId: string }, fields: KitFields) {
  await db
    .insertInto('kits')
    .values(kitRowValues(owner, fields))
    .onConflict((oc) => oc.columns(['organization_id', 'kit_id']).where('organization_id', 'is not', null).doNothing())
    .execute();
  return (await findOwnKitForUpdate(db, owner.organizationId, fields.kitId))!;
}

/** The checksum of the kit's stored version of that number, if there is one. */
/** A version's package checksum and when it was published, if the kit has that version. */
export async function findStoredVersion(db: Kysely<Database>, kitRowId: string, version: string): Promise<{ checksum: string; created_at: Date } | undefined> {
  return db.selectFrom('kit_versions').select(['checksum', 'created_at']).where('kit_row_id', '=', kitRowId).where('version', '=', version).executeTakeFirst();
}

export async function insertKitVersion(
  db: Kysely<Database>,
  values: { tenantId: string | null; kitRowId: string; version: string; manifest: Record<string, unknown>; files: Record<string, string>; checksum: string },
) {
  return db
    .insertInto('kit_versions')
    .values({
      tenant_id: values.tenantId,
      kit_row_id: values.kitRowId,
      version: values.version,
      manifest: JSON.stringify(values.manifest),
      files: JSON.stringify(values.files),
      checksum: values.checksum,
    })
    .returning(['id', 'version', 'created_at'])
    .executeTakeFirstOrThrow();
}

export async function pointKitAtVersion(db: Kysely<Database>, kitRowId: string, versionId: string, fields: KitFields) {
  await db
    .updateTable('kits')
    .set({
      latest_version_id: versionId,
      display_name: fields.displayName,
      description: fields.description,
      kit_type: fields.kitType,
      platform_name: fields.platformName,
      platform_category: fields.platformCategory,
      updated_at: databaseNow,
    })
    .where('id', '=', kitRowId)
    .execute();
}

export async function setKitStatus(db: Kysely<Database>, kitRowId: string, status: KitStatus) {
  await db.updateTable('kits').set({ status, updated_at: databaseNow }).where('id', '=', kitRowId).execute();
}

/** The orders a Variant A list of kits can be read in; each breaks ties by id, in the same direction. */
export type KitOrder = { column: 'created_at' | 'updated_at' | 'display_name'; direction: 'asc' | 'desc' };

/**
 * The kits of the organizations a user is an owner, admin or member of, with their latest version;
 * no built-in kit. Read by membership alone, as every kit route of Variant B is: a customer, or a
 * platform admin acting in another tenant (who belongs to none of its organizations), reads none.
 */
function organizationKitsOf(db: Kysely<Database>, caller: { tenantId: string; userId: string }) {
  return tenantKits(db, caller.tenantId).where('k.organization_id', 'in', organizationIdsOfMember(db, caller.tenantId, caller.userId));
}

/** The tenant's own kits (no built-in one), with their latest version. */
function tenantKits(db: Kysely<Database>, tenantId: string) {
  return db.selectFrom('kits as k').leftJoin('kit_versions as v', 'v.id', 'k.latest_version_id').where('k.tenant_id', '=', tenantId).where('k.organization_id', 'is not', null);
}

const organizationKitColumns = [...kitColumns, 'k.updated_at'] as const;

export async function listOrganizationKits(db: Kysely<Database>, caller: { tenantId: string; userId: string }, filter: Paging & { order: KitOrder }) {
  const query = organizationKitsOf(db, caller);
  const { column, direction } = filter.order;
  return pagedRows(query.select(organizationKitColumns).orderBy(`k.${column}`, direction).orderBy('k.id', direction), query, filter);
}

export async function findOrganizationKit(db: Kysely<Database>, caller: { tenantId: string; userId: string }, id: string) {
  return organizationKitsOf(db, caller).select(organizationKitColumns).where('k.id', '=', id).executeTakeFirst();
}

/** One of the tenant's own kits by id, whoever's it is: what a kit reads as once its caller's standing has been settled. */
export async function findTenantKit(db: Kysely<Database>, tenantId: string, id: string) {
  return tenantKits(db, tenantId).select(organizationKitColumns).where('k.id', '=', id).executeTakeFirst();
}

export type OrganizationKitRow = NonNullable<Awaited<ReturnType<typeof findOrganizationKit>>>;
