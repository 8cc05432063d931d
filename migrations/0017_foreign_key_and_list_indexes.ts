import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * Foreign keys are searched on their referencing side whenever a referenced row goes (the cascade,
 * the SET NULL, or the check that nothing still points at it). Without an index led by the key,
 * deleting one project, organization, kit version or user read each referencing table whole, once
 * per deleted row; deleting a tenant did so once per user. A key that is null in most rows gets a
 * partial index of the rows that hold one, which is all such a search can match.
 *
 * Lists are paged in (created_at, id) order within their filters; these lists had no index giving
 * that order (an organization's assignments had no index at all, and were read across tenants).
 *
 * A migration runs in a transaction, so these are built without CONCURRENTLY and hold writes to
 * their table meanwhile. On a large database, build them beforehand (CREATE INDEX CONCURRENTLY,
 * same names and definitions): this migration then finds them and moves on.
 */
const indexes: Array<[name: string, definition: string]> = [
  // Lists, each also the index of its leading foreign key.
  ['agency_project_assignments_listing_idx', 'agency_project_assignments (organization_id, created_at, id)'],
  ['api_keys_user_listing_idx', 'api_keys (user_id, created_at, id)'],
  ['kit_credentials_listing_idx', 'kit_credentials (organization_id, created_at, id)'],
  ['kit_executions_project_listing_idx', 'kit_executions (project_id, created_at, id)'],
  ['organization_members_listing_idx', 'organization_members (organization_id, joined_at, id)'],
  // Foreign keys alone.
  ['agency_project_assignments_tenant_idx', 'agency_project_assignments (tenant_id)'],
  ['api_keys_tenant_idx', 'api_keys (tenant_id)'],
  ['blobs_tenant_idx', 'blobs (tenant_id)'],
  ['customer_invitations_tenant_idx', 'customer_invitations (tenant_id)'],
  ['customer_invitations_invited_by_idx', 'customer_invitations (invited_by)'],
  ['customer_invitations_accepted_by_idx', 'customer_invitations (accepted_by) where accepted_by is not null'],
  ['kit_credentials_project_idx', 'kit_credentials (project_id)'],
  ['kit_credentials_created_by_idx', 'kit_credentials (created_by)'],
  ['kit_executions_organization_idx', 'kit_executions (organization_id)'],
  ['kit_executions_kit_row_idx', 'kit_executions (kit_row_id)'],
  ['kit_executions_kit_version_idx', 'kit_executions (kit_version_id)'],
  ['kit_executions_created_by_idx', 'kit_executions (created_by)'],
  ['kit_executions_bundle_blob_idx', 'kit_executions (bundle_blob_id) where bundle_blob_id is not null'],
  ['kit_outputs_tenant_idx', 'kit_outputs (tenant_id)'],
  ['kit_versions_tenant_idx', 'kit_versions (tenant_id) where tenant_id is not null'],
  ['kits_tenant_idx', 'kits (tenant_id) where tenant_id is not null'],
  ['kits_latest_version_idx', 'kits (latest_version_id) where latest_version_id is not null'],
  ['organization_members_tenant_idx', 'organization_members (tenant_id)'],
  ['organizations_owner_idx', 'organizations (owner_id)'],
  ['projects_organization_idx', 'projects (organization_id)'],
  ['projects_created_by_idx', 'projects (created_by)'],
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, definition] of indexes) {
    await sql`create index if not exists ${sql.id(name)} on ${sql.raw(definition)}`.execute(db);
  }
  // Led by the same column, the listing index does all this one did.
  await sql`drop index if exists api_keys_user_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index api_keys_user_idx on api_keys (user_id)`.execute(db);
  for (const [name] of indexes) await sql`drop index ${sql.id(name)}`.execute(db);
}
