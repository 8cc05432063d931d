import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

const APP_ROLE = 'specwright_app';

async function enableTenantIsolation(db: Kysely<any>, table: string): Promise<void> {
  await sql`alter table ${sql.table(table)} enable row level security`.execute(db);
  await sql`
    create policy tenant_isolation on ${sql.table(table)}
      using (tenant_id = app_current_tenant())
      with check (tenant_id = app_current_tenant())
  `.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create schema if not exists app_private`.execute(db);
  await sql`revoke all on schema app_private from public`.execute(db);

  // The tenant a transaction runs for; NULL (so every policy matches nothing) when unset.
  await sql`
    create function app_current_tenant() returns uuid
      language sql stable
      as $$ select nullif(current_setting('app.tenant_id', true), '')::uuid $$
  `.execute(db);

  await db.schema
    .createTable('tenants')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('features', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`alter table tenants enable row level security`.execute(db);
  await sql`
    create policy tenant_isolation on tenants
      using (id = app_current_tenant()) with check (id = app_current_tenant())
  `.execute(db);

  await db.schema
    .createTable('users')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('is_platform_admin', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // Sign-in finds a user by email before any tenant is known, so emails are unique platform-wide.
  await sql`create unique index users_email_key on users (lower(email))`.execute(db);
  await db.schema.createIndex('users_tenant_idx').on('users').column('tenant_id').execute();
  await enableTenantIsolation(db, 'users');

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('display_name', 'text')
    .addColumn('owner_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('settings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('organizations_tenant_idx').on('organizations').column('tenant_id').execute();
  await enableTenantIsolation(db, 'organizations');

  await db.schema
    .createTable('organization_members')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member', 'customer')`))
    .addColumn('joined_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('organization_members_org_user_key', ['organization_id', 'user_id'])
    .execute();
  await db.schema.createIndex('organization_members_user_idx').on('organization_members').column('user_id').execute();
  await enableTenantIsolation(db, 'organization_members');

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull().unique())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_user_idx').on('api_keys').column('user_id').execute();
  await enableTenantIsolation(db, 'api_keys');

  // Shared by every API node; the layout is rate-limiter-flexible's own. Not tenant data.
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('points', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expire', 'bigint')
    .execute();

  await db.schema
    .createTable('worker_heartbeats')
    .addColumn('worker_id', 'text', (c) => c.primaryKey())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // Authentication happens before a tenant is known: these definer functions are the only way the
  // application role can read credentials across tenants, and they return just what auth needs.
  await sql`
    create function app_private.find_user(target_user_id uuid)
      returns table (user_id uuid, tenant_id uuid, is_platform_admin boolean)
      language sql stable security definer set search_path = pg_catalog, public
      as $$ select u.id, u.tenant_id, u.is_platform_admin from users u where u.id = target_user_id $$
  `.execute(db);
  await sql`
    create function app_private.tenant_exists(target_tenant_id uuid) returns boolean
      language sql stable security definer set search_path = pg_catalog, public
      as $$ select exists (select 1 from tenants where id = target_tenant_id) $$
  `.execute(db);
  // graphile-worker's add_job runs with the caller's rights; the app role may enqueue only
  // through this wrapper, which keeps the worker's private tables out of its reach.
  await sql`
    create function app_private.enqueue_job(identifier text, payload json, job_key text default null,
                                            max_attempts integer default null, run_at timestamptz default null)
      returns bigint
      language sql volatile security definer set search_path = pg_catalog, public
      as $$
        select (graphile_worker.add_job(identifier, payload, job_key => job_key,
                                        max_attempts => max_attempts, run_at => run_at)).id
      $$
  `.execute(db);

  await sql`revoke execute on all functions in schema app_private from public`.execute(db);
  await sql`grant usage on schema app_private to ${sql.id(APP_ROLE)}`.execute(db);
  await sql`grant execute on all functions in schema app_private to ${sql.id(APP_ROLE)}`.execute(db);
  await sql`grant usage on schema public to ${sql.id(APP_ROLE)}`.execute(db);
  await sql`grant select, insert, update, delete on all tables in schema public to ${sql.id(APP_ROLE)}`.execute(db);
  await sql`alter default privileges in schema public grant select, insert, update, delete on tables to ${sql.id(APP_ROLE)}`.execute(db);
  await sql`alter default privileges in schema app_private grant execute on functions to ${sql.id(APP_ROLE)}`.execute(db);
  // Migration bookkeeping stays with the owner.
  await sql`revoke all on kysely_migration, kysely_migration_lock from ${sql.id(APP_ROLE)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['worker_heartbeats', 'rate_limits', 'api_keys', 'organization_members', 'organizations', 'users', 'tenants']) {
    await db.schema.dropTable(table).execute();
  }
  await sql`drop schema app_private cascade`.execute(db);
  await sql`drop function app_current_tenant()`.execute(db);
  // Granted by up on the public schema itself, which outlives this down: dropping the tables left
  // them, so a database taken down to nothing still gave the app role USAGE on public and SELECT,
  // INSERT, UPDATE, DELETE on any table made there later. Default privileges are those of the role
  // that set them: run this as the owner that ran up. (The role is the cluster's, made before any
  // migration runs: it stays.)
  await sql`alter default privileges in schema public revoke select, insert, update, delete on tables from ${sql.id(APP_ROLE)}`.execute(db);
  await sql`revoke usage on schema public from ${sql.id(APP_ROLE)}`.execute(db);
}
