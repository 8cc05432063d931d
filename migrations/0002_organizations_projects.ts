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
  await db.schema
    .createTable('projects')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.references('organizations.id').onDelete('set null'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('template', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status in ('active', 'completed', 'archived')`))
    .addColumn('phase', 'text', (c) =>
      c.notNull().defaultTo('CREATED').check(sql`phase in ('CREATED', 'DISCOVERY', 'FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY', 'SPECIFICATION')`),
    )
    .addColumn('progress', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('discovery_output', 'jsonb')
    .addColumn('selected_features', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('ontology_coverage', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('discovery_started_at', 'timestamptz')
    .addColumn('discovery_completed_at', 'timestamptz')
    .addColumn('feature_selection_started_at', 'timestamptz')
    .addColumn('feature_selection_completed_at', 'timestamptz')
    .addColumn('plan_generation_started_at', 'timestamptz')
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index projects_tenant_listing_idx on projects (tenant_id, created_at, id)`.execute(db);
  await enableTenantIsolation(db, 'projects');

  await db.schema
    .createTable('customer_invitations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('customer').check(sql`role in ('admin', 'member', 'customer')`))
    .addColumn('message', 'text')
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'accepted', 'revoked')`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('invited_by', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('accepted_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('accepted_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index customer_invitations_org_idx on customer_invitations (organization_id, created_at, id)`.execute(db);
  await enableTenantIsolation(db, 'customer_invitations');

  await db.schema
    .createTable('agency_project_assignments')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'uuid', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('organization_id', 'uuid', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('project_id', 'uuid', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('customer_user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('agency_project_assignments_project_customer_key', ['project_id', 'customer_user_id'])
    .execute();
  await sql`create index agency_project_assignments_customer_idx on agency_project_assignments (customer_user_id)`.execute(db);
  await enableTenantIsolation(db, 'agency_project_assignments');

  // Public routes find an invitation, sign-in finds a user, and slug checks look across tenants,
  // all before a tenant is known: definer functions return just what those steps need.
  await sql`
    create function app_private.find_invitation(target_token_hash text)
      returns table (invitation_id uuid, tenant_id uuid, organization_id uuid)
      language sql stable security definer set search_path = pg_catalog, public
      as $$ select i.id, i.tenant_id, i.organization_id from customer_invitations i where i.token_hash = target_token_hash $$
  `.execute(db);
  await sql`
    create function app_private.find_login(target_email text)
      returns table (user_id uuid, tenant_id uuid, password_hash text)
      language sql stable security definer set search_path = pg_catalog, public
      as $$ select u.id, u.tenant_id, u.password_hash from users u where lower(u.email) = lower(target_email) $$
  `.execute(db);
  await sql`
    create function app_private.slug_taken(target_slug text) returns boolean
      language sql stable security definer set search_path = pg_catalog, public
      as $$ select exists (select 1 from organizations where slug = target_slug) $$
  `.execute(db);
  await sql`
    create function app_private.email_taken(target_email text) returns boolean
      language sql stable security definer set search_path = pg_catalog, public
      as $$ select exists (select 1 from users where lower(email) = lower(target_email)) $$
  `.execute(db);
  await sql`revoke execute on all functions in schema app_private from public`.execute(db);
  await sql`grant execute on all functions in schema app_private to specwright_app`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const fn of ['find_invitation(text)', 'find_login(text)', 'slug_taken(text)', 'email_taken(text)']) {
    await sql.raw(`drop function app_private.${fn}`).execute(db);
  }
  for (const table of ['agency_project_assignments', 'customer_invitations', 'projects']) {
    await db.schema.dropTable(table).execute();
  }
}
