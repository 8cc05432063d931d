import { sql, type Kysely } from 'kysely';

// Frozen in time: this file never imports application code.

/**
 * Built-in kits and their versions (tenant_id null) were in every tenant's reach for UPDATE and
 * DELETE as well as SELECT: one policy for all commands, whose USING let null-tenant rows through.
 * A tenant could delete a built-in kit, and the cascade took every tenant's executions of it along,
 * or take it over by setting its tenant to its own. Reading stays shared; writing is confined to the
 * tenant's own rows, and a version may only be added to a kit of the tenant's own (a foreign key is
 * checked past row-level security, and the version numbers of a built-in kit are the platform's).
 */
const TENANT_OWN = sql`tenant_id = app_current_tenant()`;

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['kits', 'kit_versions']) {
    const t = sql.table(table);
    await sql`drop policy tenant_isolation on ${t}`.execute(db);
    await sql`create policy tenant_or_built_in_read on ${t} for select using (tenant_id is null or ${TENANT_OWN})`.execute(db);
    await sql`create policy tenant_isolation_update on ${t} for update using (${TENANT_OWN}) with check (${TENANT_OWN})`.execute(db);
    await sql`create policy tenant_isolation_delete on ${t} for delete using (${TENANT_OWN})`.execute(db);
  }
  await sql`create policy tenant_isolation_insert on kits for insert with check (${TENANT_OWN})`.execute(db);
  await sql`
    create policy tenant_isolation_insert on kit_versions for insert
      with check (${TENANT_OWN} and exists (select 1 from kits k where k.id = kit_versions.kit_row_id and k.tenant_id = app_current_tenant()))
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['kits', 'kit_versions']) {
    const t = sql.table(table);
    for (const policy of ['tenant_or_built_in_read', 'tenant_isolation_insert', 'tenant_isolation_update', 'tenant_isolation_delete']) {
      await sql`drop policy ${sql.id(policy)} on ${t}`.execute(db);
    }
    await sql`
      create policy tenant_isolation on ${t}
        using (tenant_id is null or ${TENANT_OWN})
        with check (${TENANT_OWN})
    `.execute(db);
  }
}
