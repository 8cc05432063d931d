import { beforeAll, describe, expect, it } from 'vitest';
import { asAppRoleInTenant } from '../helpers/app-role-sql.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * Built-in kits (tenant_id null) are read by every tenant and written only by the owner role at boot.
 * Row-level security must hold that line itself: a tenant that could update a built-in kit could take
 * it over (set its tenant to its own). One that could delete it or its version would take every other
 * tenant's executions of it along (ON DELETE CASCADE runs past row-level security): no request deletes
 * a kit or a version at all (the app role may not, since 0020; a kit is deprecated instead).
 */
let database: TestDatabase;
let mine: { tenantId: string; organizationId: string; kitId: string };
let theirs: { tenantId: string; executionId: string };
let builtIn: { kitId: string; versionId: string };
const sql = (text: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, text, values);

async function tenantWithOrganization(name: string) {
  const [tenant] = await sql(`insert into tenants (name) values ($1) returning id`, [name]);
  const [user] = await sql(`insert into users (tenant_id, email, name) values ($1, $2, 'u') returning id`, [tenant.id, `${name}@example.test`]);
  const [organization] = await sql(`insert into organizations (tenant_id, name, slug, owner_id) values ($1, $2, $2, $3) returning id`, [tenant.id, name, user.id]);
  return { tenantId: tenant.id as string, organizationId: organization.id as string };
}

beforeAll(async () => {
  database = await createTestDatabase();
  const [kit] = await sql(`insert into kits (kit_id, display_name, kit_type, platform_name, platform_category) values ('built-in', 'Built in', 'file', 'p', 'c') returning id`);
  const [version] = await sql(`insert into kit_versions (kit_row_id, version, manifest, files, checksum) values ($1, '1.0.0', '{}', '{}', 'x') returning id`, [kit.id]);
  await sql('update kits set latest_version_id = $1 where id = $2', [version.id, kit.id]);
  builtIn = { kitId: kit.id, versionId: version.id };

  const a = await tenantWithOrganization('mine');
  const [own] = await sql(
    `insert into kits (tenant_id, organization_id, kit_id, display_name, kit_type, platform_name, platform_category) values ($1, $2, 'own', 'Own', 'file', 'p', 'c') returning id`,
    [a.tenantId, a.organizationId],
  );
  mine = { ...a, kitId: own.id };
  const b = await tenantWithOrganization('theirs');
  const [project] = await sql(`insert into projects (tenant_id, organization_id, name) values ($1, $2, 'P') returning id`, [b.tenantId, b.organizationId]);
  const [execution] = await sql(
    `insert into kit_executions (tenant_id, organization_id, project_id, kit_row_id, kit_version_id, input) values ($1, $2, $3, $4, $5, '{}') returning id`,
    [b.tenantId, b.organizationId, project.id, builtIn.kitId, builtIn.versionId],
  );
  theirs = { tenantId: b.tenantId, executionId: execution.id };
});

/** `text` as a request of my tenant runs it, rolled back: the rows it reached, or the SQLSTATE it failed with. */
const asMyTenant = (text: string, values: unknown[] = []) => asAppRoleInTenant(database.appUrl, mine.tenantId, text, values);

describe('a built-in kit, to a tenant', () => {
  it('is readable, with its versions', async () => {
    expect(await asMyTenant('select id from kits where id = $1', [builtIn.kitId])).toBe(1);
    expect(await asMyTenant('select id from kit_versions where id = $1', [builtIn.versionId])).toBe(1);
  });

  it('cannot be deleted, nor its version: the cascade would take other tenants’ executions with it', async () => {
    expect(await asMyTenant('delete from kits where id = $1', [builtIn.kitId])).toBe('42501');
    expect(await asMyTenant('delete from kit_versions where id = $1', [builtIn.versionId])).toBe('42501');
    expect(await sql('select id from kit_executions where id = $1', [theirs.executionId])).toHaveLength(1);
  });

  it('cannot be taken over or changed', async () => {
    expect(await asMyTenant('update kits set tenant_id = $1, organization_id = $2 where id = $3', [mine.tenantId, mine.organizationId, builtIn.kitId])).toBe(0);
    expect(await asMyTenant(`update kits set status = 'deprecated' where id = $1`, [builtIn.kitId])).toBe(0);
  });

  it('cannot be given a version of the tenant’s making (its version numbers are the platform’s to take)', async () => {
    expect(await asMyTenant(`insert into kit_versions (tenant_id, kit_row_id, version, manifest, files, checksum) values ($1, $2, '2.0.0', '{}', '{}', 'x')`, [mine.tenantId, builtIn.kitId])).toBe('42501');
  });
});

describe("a tenant's own kit, to that tenant", () => {
  it('can still be changed and given versions, but not deleted (a kit is deprecated instead)', async () => {
    expect(await asMyTenant(`update kits set status = 'deprecated' where id = $1`, [mine.kitId])).toBe(1);
    expect(await asMyTenant(`insert into kit_versions (tenant_id, kit_row_id, version, manifest, files, checksum) values ($1, $2, '1.0.0', '{}', '{}', 'x')`, [mine.tenantId, mine.kitId])).toBe(1);
    expect(await asMyTenant('delete from kits where id = $1', [mine.kitId])).toBe('42501');
  });

  it("is out of another tenant's sight and reach", async () => {
    const asTheirTenant = (text: string, values: unknown[]) => asAppRoleInTenant(database.appUrl, theirs.tenantId, text, values);
    expect(await asTheirTenant('select id from kits where id = $1', [mine.kitId])).toBe(0);
    expect(await asTheirTenant(`update kits set status = 'draft' where id = $1`, [mine.kitId])).toBe(0);
    expect(await asTheirTenant('delete from kits where id = $1', [mine.kitId])).toBe('42501');
  });
});
