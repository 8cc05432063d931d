import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * A foreign key is checked past row-level security: the app role, in tenant A's transaction, could
 * write a row of A naming B's user, organization, project, kit version or execution, if it knew the
 * id (a membership of A's organization for B's user, an assignment of B's project). The service
 * reads every id through its tenant before writing, so no request did; but one code bug would have
 * linked two tenants' data, and a unique key over such a row (organization_id, user_id) could stand
 * in the other tenant's way. Each key between two tenant-owned tables now names the tenant on both
 * sides, `(tenant_id, x_id) REFERENCES parent (tenant_id, id)`, so the row it names must be of the
 * referencing row's own tenant, whoever writes it.
 *
 * ON DELETE is kept key by key. CASCADE removes the same rows as before (every row is within its
 * tenant). SET NULL names its column, `ON DELETE SET NULL (x_id)` (PostgreSQL 15+), so the row
 * loses the reference and keeps its tenant_id. organizations.owner_id stays NO ACTION.
 *
 * Tables that also hold global rows (built-in kits and their versions, tenant_id null):
 *  - kits.organization_id: a built-in kit has neither tenant nor organization (kits_builtin_or_owned),
 *    so the composite key checks every kit that names an organization: it replaces the single key.
 *  - kit_versions.kit_row_id and kits.latest_version_id: a composite key with tenant_id null is not
 *    checked (MATCH SIMPLE), which is right for a tenant row and would leave a built-in row's
 *    reference unchecked, and its cascade or SET NULL undone. These keep their single-column key
 *    for built-in rows and gain the composite one for tenant rows (tenant_id set: the kit or
 *    version named must be of the same tenant).
 *  - kit_executions.kit_row_id and kit_version_id: an execution always has a tenant and may run a
 *    built-in kit (tenant_id null), which no key to (tenant_id, id) can allow. These stay
 *    single-column keys, and a trigger refuses (as a foreign-key violation, 23503) an execution
 *    naming a kit or kit version that is neither built in nor of the execution's tenant. It reads
 *    with the writer's rights: the app role sees only built-in kits and its tenant's, the owner all.
 *
 * The referenced side gets a unique index on (tenant_id, id); where it leads with tenant_id, it
 * also serves the key to tenants, and the plain (tenant_id) index goes. The referencing side of
 * each key gets an index led by its two columns: the index that served the single key gains
 * tenant_id, or a (tenant_id) index gains the key's column, or an existing index already serves
 * it (and the one made only for the single key goes). Partial indexes of a nullable key become
 * whole ones (a foreign key's search may only use a partial index whose predicate it implies).
 *
 * Existing rows are checked first: a database holding a row that names another tenant's row stops
 * here, naming each key and how many rows break it, for someone to look at, rather than having the
 * rows changed or dropped by a migration. As in 0017, the indexes can be built beforehand on a
 * large database (CREATE [UNIQUE] INDEX CONCURRENTLY, same names and definitions).
 */

type OnDelete = 'cascade' | 'set null' | 'no action';

interface Key {
  table: string;
  column: string;
  parent: string;
  onDelete: OnDelete;
  /** The single-column key this one replaces, or (global rows) is added beside. */
  single: string;
  /** Set where the single-column key stays, for rows with tenant_id null: the composite key's name. */
  besideSingle?: string;
}

const KEYS: Key[] = [
  { table: 'agency_project_assignments', column: 'customer_user_id', parent: 'users', onDelete: 'cascade', single: 'agency_project_assignments_customer_user_id_fkey' },
  { table: 'agency_project_assignments', column: 'organization_id', parent: 'organizations', onDelete: 'cascade', single: 'agency_project_assignments_organization_id_fkey' },
  { table: 'agency_project_assignments', column: 'project_id', parent: 'projects', onDelete: 'cascade', single: 'agency_project_assignments_project_id_fkey' },
  { table: 'api_keys', column: 'user_id', parent: 'users', onDelete: 'cascade', single: 'api_keys_user_id_fkey' },
  { table: 'customer_invitations', column: 'accepted_by', parent: 'users', onDelete: 'set null', single: 'customer_invitations_accepted_by_fkey' },
  { table: 'customer_invitations', column: 'invited_by', parent: 'users', onDelete: 'cascade', single: 'customer_invitations_invited_by_fkey' },
  { table: 'customer_invitations', column: 'organization_id', parent: 'organizations', onDelete: 'cascade', single: 'customer_invitations_organization_id_fkey' },
  { table: 'kit_credentials', column: 'created_by', parent: 'users', onDelete: 'set null', single: 'kit_credentials_created_by_fkey' },
  { table: 'kit_credentials', column: 'organization_id', parent: 'organizations', onDelete: 'cascade', single: 'kit_credentials_organization_id_fkey' },
  { table: 'kit_credentials', column: 'project_id', parent: 'projects', onDelete: 'cascade', single: 'kit_credentials_project_id_fkey' },
  { table: 'kit_executions', column: 'bundle_blob_id', parent: 'blobs', onDelete: 'set null', single: 'kit_executions_bundle_blob_id_fkey' },
  { table: 'kit_executions', column: 'created_by', parent: 'users', onDelete: 'set null', single: 'kit_executions_created_by_fkey' },
  { table: 'kit_executions', column: 'organization_id', parent: 'organizations', onDelete: 'cascade', single: 'kit_executions_organization_id_fkey' },
  { table: 'kit_executions', column: 'project_id', parent: 'projects', onDelete: 'cascade', single: 'kit_executions_project_id_fkey' },
  { table: 'kit_outputs', column: 'execution_id', parent: 'kit_executions', onDelete: 'cascade', single: 'kit_outputs_execution_id_fkey' },
  { table: 'kit_versions', column: 'kit_row_id', parent: 'kits', onDelete: 'cascade', single: 'kit_versions_kit_row_id_fkey', besideSingle: 'kit_versions_kit_row_id_tenant_fkey' },
  { table: 'kits', column: 'latest_version_id', parent: 'kit_versions', onDelete: 'set null', single: 'kits_latest_version_fkey', besideSingle: 'kits_latest_version_tenant_fkey' },
  { table: 'kits', column: 'organization_id', parent: 'organizations', onDelete: 'cascade', single: 'kits_organization_id_fkey' },
  { table: 'organization_members', column: 'organization_id', parent: 'organizations', onDelete: 'cascade', single: 'organization_members_organization_id_fkey' },
  { table: 'organization_members', column: 'user_id', parent: 'users', onDelete: 'cascade', single: 'organization_members_user_id_fkey' },
  { table: 'organizations', column: 'owner_id', parent: 'users', onDelete: 'no action', single: 'organizations_owner_id_fkey' },
  { table: 'projects', column: 'created_by', parent: 'users', onDelete: 'set null', single: 'projects_created_by_fkey' },
  { table: 'projects', column: 'organization_id', parent: 'organizations', onDelete: 'set null', single: 'projects_organization_id_fkey' },
];

/** The keys kept single-column because built-in kits and versions (tenant_id null) may be named: guarded by the trigger below. */
const EXECUTION_KIT_KEYS: Array<{ column: string; parent: string }> = [
  { column: 'kit_row_id', parent: 'kits' },
  { column: 'kit_version_id', parent: 'kit_versions' },
];

/** The referenced side: (tenant_id, id) unique, and the plain (tenant_id) index it makes redundant, if any. */
const PARENTS: Array<{ table: string; replaces?: [name: string, definition: string] }> = [
  { table: 'users', replaces: ['users_tenant_idx', 'users (tenant_id)'] },
  { table: 'organizations', replaces: ['organizations_tenant_idx', 'organizations (tenant_id)'] },
  { table: 'projects' },
  { table: 'blobs', replaces: ['blobs_tenant_idx', 'blobs (tenant_id)'] },
  { table: 'kits', replaces: ['kits_tenant_idx', 'kits (tenant_id) where tenant_id is not null'] },
  { table: 'kit_versions', replaces: ['kit_versions_tenant_idx', 'kit_versions (tenant_id) where tenant_id is not null'] },
  { table: 'kit_executions' },
];

/**
 * The referencing side: each new index, and the index it replaces (dropped: the new one does all it
 * did, being led by the same column, or by tenant_id where it served only the key to tenants).
 */
const CHILD_INDEXES: Array<{ name: string; definition: string; replaces?: [name: string, definition: string] }> = [
  { name: 'agency_project_assignments_customer_in_tenant_idx', definition: 'agency_project_assignments (customer_user_id, tenant_id)', replaces: ['agency_project_assignments_customer_idx', 'agency_project_assignments (customer_user_id)'] },
  { name: 'agency_project_assignments_listing_in_tenant_idx', definition: 'agency_project_assignments (organization_id, tenant_id, created_at, id)', replaces: ['agency_project_assignments_listing_idx', 'agency_project_assignments (organization_id, created_at, id)'] },
  { name: 'agency_project_assignments_tenant_project_idx', definition: 'agency_project_assignments (tenant_id, project_id)', replaces: ['agency_project_assignments_tenant_idx', 'agency_project_assignments (tenant_id)'] },
  { name: 'api_keys_tenant_user_idx', definition: 'api_keys (tenant_id, user_id)', replaces: ['api_keys_tenant_idx', 'api_keys (tenant_id)'] },
  { name: 'customer_invitations_accepted_by_in_tenant_idx', definition: 'customer_invitations (accepted_by, tenant_id)', replaces: ['customer_invitations_accepted_by_idx', 'customer_invitations (accepted_by) where accepted_by is not null'] },
  { name: 'customer_invitations_invited_by_in_tenant_idx', definition: 'customer_invitations (invited_by, tenant_id)', replaces: ['customer_invitations_invited_by_idx', 'customer_invitations (invited_by)'] },
  { name: 'customer_invitations_tenant_organization_idx', definition: 'customer_invitations (tenant_id, organization_id)', replaces: ['customer_invitations_tenant_idx', 'customer_invitations (tenant_id)'] },
  { name: 'kit_credentials_created_by_in_tenant_idx', definition: 'kit_credentials (created_by, tenant_id)', replaces: ['kit_credentials_created_by_idx', 'kit_credentials (created_by)'] },
  { name: 'kit_credentials_listing_in_tenant_idx', definition: 'kit_credentials (organization_id, tenant_id, created_at, id)', replaces: ['kit_credentials_listing_idx', 'kit_credentials (organization_id, created_at, id)'] },
  // (tenant_id, project_id) is served by kit_credentials_lookup_idx (tenant_id, project_id, kit_id).
  { name: 'kit_executions_bundle_blob_in_tenant_idx', definition: 'kit_executions (bundle_blob_id, tenant_id)', replaces: ['kit_executions_bundle_blob_idx', 'kit_executions (bundle_blob_id) where bundle_blob_id is not null'] },
  { name: 'kit_executions_created_by_in_tenant_idx', definition: 'kit_executions (created_by, tenant_id)', replaces: ['kit_executions_created_by_idx', 'kit_executions (created_by)'] },
  { name: 'kit_executions_project_listing_in_tenant_idx', definition: 'kit_executions (project_id, tenant_id, created_at, id)', replaces: ['kit_executions_project_listing_idx', 'kit_executions (project_id, created_at, id)'] },
  // (tenant_id, organization_id) is served by kit_executions_listing_idx (tenant_id, organization_id, created_at, id).
  { name: 'kit_outputs_tenant_execution_idx', definition: 'kit_outputs (tenant_id, execution_id)', replaces: ['kit_outputs_tenant_idx', 'kit_outputs (tenant_id)'] },
  { name: 'kit_versions_tenant_kit_idx', definition: 'kit_versions (tenant_id, kit_row_id)' },
  { name: 'kits_latest_version_in_tenant_idx', definition: 'kits (latest_version_id, tenant_id)', replaces: ['kits_latest_version_idx', 'kits (latest_version_id) where latest_version_id is not null'] },
  { name: 'kits_tenant_organization_idx', definition: 'kits (tenant_id, organization_id)' },
  { name: 'organization_members_tenant_organization_idx', definition: 'organization_members (tenant_id, organization_id)', replaces: ['organization_members_tenant_idx', 'organization_members (tenant_id)'] },
  { name: 'organization_members_user_in_tenant_idx', definition: 'organization_members (user_id, tenant_id)', replaces: ['organization_members_user_idx', 'organization_members (user_id)'] },
  { name: 'organizations_owner_in_tenant_idx', definition: 'organizations (owner_id, tenant_id)', replaces: ['organizations_owner_idx', 'organizations (owner_id)'] },
  { name: 'projects_created_by_in_tenant_idx', definition: 'projects (created_by, tenant_id)', replaces: ['projects_created_by_idx', 'projects (created_by)'] },
  { name: 'projects_organization_in_tenant_idx', definition: 'projects (organization_id, tenant_id)', replaces: ['projects_organization_idx', 'projects (organization_id)'] },
];

/** Indexes made only for a single-column key that an existing index now serves in its composite form. */
const SERVED_ELSEWHERE: Array<[name: string, definition: string]> = [
  ['kit_credentials_project_idx', 'kit_credentials (project_id)'],
  ['kit_executions_organization_idx', 'kit_executions (organization_id)'],
];

const id = (name: string) => sql.id(name);

function onDeleteClause(key: Key) {
  if (key.onDelete === 'cascade') return sql`on delete cascade`;
  if (key.onDelete === 'set null') return sql`on delete set null (${id(key.column)})`;
  return sql``;
}

/** How many rows of `table` name, through `column`, a row of `parent` of another tenant (rows with no tenant are not checked). */
async function crossingRows(db: Kysely<any>, table: string, column: string, parent: string, builtInAllowed: boolean): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n
      from ${id(table)} c join ${id(parent)} p on p.id = c.${id(column)}
     where c.tenant_id is not null and p.tenant_id is distinct from c.tenant_id
       ${builtInAllowed ? sql`and p.tenant_id is not null` : sql``}
  `.execute(db);
  return rows[0]!.n;
}

export async function up(db: Kysely<any>): Promise<void> {
  const crossing: string[] = [];
  for (const key of KEYS) {
    const n = await crossingRows(db, key.table, key.column, key.parent, false);
    if (n > 0) crossing.push(`${key.table}.${key.column} -> ${key.parent}: ${n} row${n === 1 ? '' : 's'}`);
  }
  for (const key of EXECUTION_KIT_KEYS) {
    const n = await crossingRows(db, 'kit_executions', key.column, key.parent, true);
    if (n > 0) crossing.push(`kit_executions.${key.column} -> ${key.parent}: ${n} row${n === 1 ? '' : 's'}`);
  }
  if (crossing.length > 0) {
    throw new Error(
      `Rows name a row of another tenant, so foreign keys cannot be confined to a tenant (${crossing.join('; ')}). ` +
        `Find them with: select c.* from <table> c join <parent> p on p.id = c.<column> where p.tenant_id is distinct from c.tenant_id; ` +
        `then delete them or point them at their own tenant's rows, and run the migration again.`,
    );
  }

  for (const { table } of PARENTS) {
    await sql`create unique index if not exists ${id(`${table}_tenant_id_id_key`)} on ${id(table)} (tenant_id, id)`.execute(db);
  }
  for (const { name, definition } of CHILD_INDEXES) {
    await sql`create index if not exists ${id(name)} on ${sql.raw(definition)}`.execute(db);
  }

  for (const key of KEYS) {
    const composite = key.besideSingle ?? key.single;
    await sql`
      alter table ${id(key.table)}
        ${key.besideSingle ? sql`` : sql`drop constraint ${id(key.single)},`}
        add constraint ${id(composite)} foreign key (tenant_id, ${id(key.column)})
          references ${id(key.parent)} (tenant_id, id) ${onDeleteClause(key)}
    `.execute(db);
  }

  await sql`
    create function app_private.kit_executions_run_kits_of_their_tenant() returns trigger
      language plpgsql set search_path = pg_catalog, public as $$
      begin
        if not exists (select 1 from kits k where k.id = new.kit_row_id and (k.tenant_id is null or k.tenant_id = new.tenant_id))
           or not exists (select 1 from kit_versions v where v.id = new.kit_version_id and (v.tenant_id is null or v.tenant_id = new.tenant_id)) then
          raise exception 'a kit execution may run only a built-in kit or one of its own tenant'
            using errcode = 'foreign_key_violation', table = 'kit_executions';
        end if;
        return new;
      end
      $$
  `.execute(db);
  await sql`
    create trigger kit_executions_run_kits_of_their_tenant before insert or update of tenant_id, kit_row_id, kit_version_id on kit_executions
      for each row execute function app_private.kit_executions_run_kits_of_their_tenant()
  `.execute(db);

  for (const index of [...PARENTS.flatMap((parent) => (parent.replaces ? [parent.replaces] : [])), ...CHILD_INDEXES.flatMap((child) => (child.replaces ? [child.replaces] : [])), ...SERVED_ELSEWHERE]) {
    await sql`drop index if exists ${id(index[0])}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name, definition] of [...PARENTS.flatMap((parent) => (parent.replaces ? [parent.replaces] : [])), ...CHILD_INDEXES.flatMap((child) => (child.replaces ? [child.replaces] : [])), ...SERVED_ELSEWHERE]) {
    await sql`create index ${id(name)} on ${sql.raw(definition)}`.execute(db);
  }
  await sql`drop trigger kit_executions_run_kits_of_their_tenant on kit_executions`.execute(db);
  await sql`drop function app_private.kit_executions_run_kits_of_their_tenant()`.execute(db);
  for (const key of KEYS) {
    if (key.besideSingle) {
      await sql`alter table ${id(key.table)} drop constraint ${id(key.besideSingle)}`.execute(db);
      continue;
    }
    const onDelete = key.onDelete === 'no action' ? sql`` : sql`on delete ${sql.raw(key.onDelete)}`;
    await sql`
      alter table ${id(key.table)}
        drop constraint ${id(key.single)},
        add constraint ${id(key.single)} foreign key (${id(key.column)}) references ${id(key.parent)} (id) ${onDelete}
    `.execute(db);
  }
  for (const { name } of CHILD_INDEXES) await sql`drop index ${id(name)}`.execute(db);
  for (const { table } of PARENTS) await sql`drop index ${id(`${table}_tenant_id_id_key`)}`.execute(db);
}
