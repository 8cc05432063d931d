import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

async function enableTenantIsolation(db: Kysely<any>, table: string): Promise<void> {
  await sql`alter table ${sql.table(table)} enable row level security`.execute(db);
  await sql`
    create policy tenant_isolation on ${sql.table(table)}
      using (tenant_id = app_current_tenant())
      with check (tenant_id = app_current_tenant())
  `.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  // Kits: an organization's own (tenant_id set) or built in (tenant_id null, visible to every
  // tenant, written only by the owner role at boot).
  await db.schema
    .createTable('kits')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('kit_id', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('kit_type', 'text', (c) => c.notNull().check(sql`kit_type in ('file', 'platform', 'api', 'hybrid', 'composite')`))
    .addColumn('platform_name', 'text', (c) => c.notNull())
    .addColumn('platform_category', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status in ('active', 'deprecated', 'draft')`))
    .addColumn('latest_version_id', 'uuid')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('kits_builtin_or_owned', sql`(tenant_id is null) = (organization_id is null)`)
    .execute();
  await sql`create unique index kits_org_kit_id_key on kits (organization_id, kit_id) where organization_id is not null`.execute(db);
  await sql`create unique index kits_builtin_kit_id_key on kits (kit_id) where organization_id is null`.execute(db);
  await sql`alter table kits enable row level security`.execute(db);
  await sql`
    create policy tenant_isolation on kits
      using (tenant_id is null or tenant_id = app_current_tenant())
      with check (tenant_id = app_current_tenant())
  `.execute(db);

  await db.schema
    .createTable('kit_versions')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.references('tenants.id').onDelete('cascade'))
    .addColumn('kit_row_id', 'uuid', (c) => c.notNull().references('kits.id').onDelete('cascade'))
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('manifest', 'jsonb', (c) => c.notNull())
    .addColumn('files', 'jsonb', (c) => c.notNull())
    .addColumn('checksum', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('kit_versions_kit_version_key', ['kit_row_id', 'version'])
    .execute();
  await sql`alter table kit_versions enable row level security`.execute(db);
  await sql`
    create policy tenant_isolation on kit_versions
      using (tenant_id is null or tenant_id = app_current_tenant())
      with check (tenant_id = app_current_tenant())
  `.execute(db);
  // Published versions never change; the database enforces it, whoever asks.
  await sql`
    create function app_private.kit_versions_are_immutable() returns trigger
      language plpgsql as $$
      begin
        raise exception 'kit versions are immutable' using errcode = 'integrity_constraint_violation';
      end
      $$
  `.execute(db);
  await sql`
    create trigger kit_versions_immutable before update on kit_versions
      for each row execute function app_private.kit_versions_are_immutable()
  `.execute(db);
  await sql`alter table kits add constraint kits_latest_version_fkey foreign key (latest_version_id) references kit_versions (id) on delete set null`.execute(db);

  // Bytes (bundles, later uploads) behind the blob-store interface.
  await db.schema
    .createTable('blobs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('content', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await enableTenantIsolation(db, 'blobs');

  await db.schema
    .createTable('kit_executions')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('project_id', 'uuid', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('kit_row_id', 'uuid', (c) => c.notNull().references('kits.id').onDelete('cascade'))
    .addColumn('kit_version_id', 'uuid', (c) => c.notNull().references('kit_versions.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('pending').check(sql`status in ('pending', 'running', 'completed', 'failed', 'partial')`),
    )
    .addColumn('input', 'jsonb', (c) => c.notNull())
    .addColumn('options', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('worker_run_id', 'text')
    .addColumn('worker_process_id', 'text')
    .addColumn('locked_by', 'text')
    .addColumn('error_message', 'text')
    .addColumn('phases', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('completed_at', 'timestamptz')
    .addColumn('execution_time_ms', 'integer')
    .addColumn('outputs_valid', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('outputs_warnings', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('outputs_failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('token_usage', 'jsonb', (c) => c.notNull().defaultTo(sql`'{"prompt": 0, "completion": 0, "total": 0}'::jsonb`))
    .addColumn('estimated_cost_usd', 'numeric(12, 6)', (c) => c.notNull().defaultTo(0))
    .addColumn('bundle_blob_id', 'uuid', (c) => c.references('blobs.id').onDelete('set null'))
    .addColumn('bundle_path', 'text')
    .addColumn('bundle_size_bytes', 'bigint')
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index kit_executions_listing_idx on kit_executions (tenant_id, organization_id, created_at, id)`.execute(db);
  await sql`create index kit_executions_running_idx on kit_executions (status) where status = 'running'`.execute(db);
  await enableTenantIsolation(db, 'kit_executions');

  await db.schema
    .createTable('kit_outputs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('execution_id', 'uuid', (c) => c.notNull().references('kit_executions.id').onDelete('cascade'))
    .addColumn('output_id', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('output_type', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('valid', 'warning', 'invalid')`))
    .addColumn('validation_errors', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('validation_warnings', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('content_size_bytes', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // A re-run replaces outputs; it can never add a second copy of one.
    .addUniqueConstraint('kit_outputs_execution_output_key', ['execution_id', 'output_id'])
    .execute();
  await enableTenantIsolation(db, 'kit_outputs');

  await db.schema
    .createTable('kit_credentials')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('project_id', 'uuid', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('kit_id', 'text', (c) => c.notNull())
    .addColumn('credential_type', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status in ('active', 'invalid')`))
    .addColumn('last_checked_at', 'timestamptz')
    .addColumn('last_check_status', 'text')
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index kit_credentials_lookup_idx on kit_credentials (tenant_id, project_id, kit_id)`.execute(db);
  await enableTenantIsolation(db, 'kit_credentials');

  // The server's X25519 key ring. Private keys are stored sealed with a key derived from
  // SERVER_SECRET, and only the owner role (migrations, workers) can read the table at all.
  await db.schema
    .createTable('credential_keys')
    .addColumn('key_id', 'text', (c) => c.primaryKey())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('sealed_private_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('retired_at', 'timestamptz')
    .execute();
  await sql`revoke all on credential_keys from specwright_app`.execute(db);
  await sql`
    create function app_private.current_credential_key()
      returns table (key_id text, public_key text)
      language sql stable security definer set search_path = pg_catalog, public
      as $$ select k.key_id, k.public_key from credential_keys k where k.retired_at is null order by k.created_at desc limit 1 $$
  `.execute(db);
  await sql`revoke execute on all functions in schema app_private from public`.execute(db);
  await sql`grant execute on all functions in schema app_private to specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function app_private.current_credential_key()`.execute(db);
  for (const table of ['credential_keys', 'kit_credentials', 'kit_outputs', 'kit_executions', 'blobs']) await db.schema.dropTable(table).execute();
  await sql`alter table kits drop constraint kits_latest_version_fkey`.execute(db);
  await db.schema.dropTable('kit_versions').execute();
  await sql`drop function app_private.kit_versions_are_immutable()`.execute(db);
  await db.schema.dropTable('kits').execute();
}
