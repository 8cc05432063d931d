import { beforeAll, describe, expect, it } from 'vitest';
import { inAppRoleTransaction } from '../helpers/app-role-sql.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * A schema search path that does not name pg_temp searches it first, before pg_catalog, for tables
 * and views. Functions that pin `search_path = pg_catalog, public` therefore read a table of the
 * caller's making when the caller (any role with TEMP on the database: PUBLIC has it) made a
 * temporary one of the same name. In a SECURITY DEFINER function that is the definer reading it,
 * and calling whatever function the caller's temporary view calls, with the definer's rights.
 */
let database: TestDatabase;
const sql = (text: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, text, values);
let a: { tenantId: string; organizationId: string; projectId: string };
let b: { tenantId: string; userId: string; organizationId: string; kitId: string; versionId: string };

beforeAll(async () => {
  database = await createTestDatabase();
  const made = async (name: string) => {
    const [t] = await sql(`insert into tenants (name) values ($1) returning id`, [name]);
    const [u] = await sql(`insert into users (tenant_id, email, name) values ($1, $2, 'Owner') returning id`, [t.id, `owner@${name}.test`]);
    const [o] = await sql(`insert into organizations (tenant_id, name, slug, owner_id) values ($1, $2, $2, $3) returning id`, [t.id, name, u.id]);
    const [p] = await sql(`insert into projects (tenant_id, organization_id, name) values ($1, $2, 'P') returning id`, [t.id, o.id]);
    const [k] = await sql(`insert into kits (tenant_id, organization_id, kit_id, display_name, kit_type, platform_name, platform_category) values ($1, $2, 'own', 'Own', 'file', 'p', 'c') returning id`, [t.id, o.id]);
    const [v] = await sql(`insert into kit_versions (tenant_id, kit_row_id, version, manifest, files, checksum) values ($1, $2, '1.0.0', '{}', '{}', 'x') returning id`, [t.id, k.id]);
    return { tenantId: t.id, userId: u.id, organizationId: o.id, projectId: p.id, kitId: k.id, versionId: v.id };
  };
  a = await made('a');
  b = await made('b');
  await sql(`insert into credential_keys (key_id, public_key, sealed_private_key) values ('server-1', 'pk', 'sealed')`);
});

/** Runs `statements` as the app role in one transaction of tenant A, rolled back: the last one's rows. */
async function inTenantA(statements: Array<[string, unknown[]?]>): Promise<unknown[]> {
  return inAppRoleTransaction(database.appUrl, a.tenantId, async (client) => {
    let rows: unknown[] = [];
    for (const [text, values] of statements) rows = (await client.query(text, values)).rows;
    return rows;
  });
}

describe('a function that pins its search path', () => {
  it('lists pg_temp last, so a temporary table of the caller never stands in for the real one', async () => {
    const unpinned = await sql(
      `select p.oid::regprocedure::text as function, coalesce(array_to_string(p.proconfig, ' '), '(none)') as config
         from pg_proc p
        where p.pronamespace in ('public'::regnamespace, 'app_private'::regnamespace)
          and (p.prosecdef or exists (select 1 from unnest(p.proconfig) s where s like 'search_path=%'))
          and not exists (select 1 from unnest(p.proconfig) s where s ~ '^search_path=.*pg_temp$')
        order by 1`,
    );
    expect(unpinned).toEqual([]);
  });

  it("runs no function of the app role's making with the owner's rights (a temporary view named users)", async () => {
    const rows = await inTenantA([
      [`create function pg_temp.as_whom() returns text language sql volatile as $$ select current_user || ' reads ' || (select count(*) from public.credential_keys) || ' sealed private keys' $$`],
      // DDL takes no parameters: the id (a uuid the database made) is inlined.
      [`create temp view users as select '${b.userId}'::uuid as id, pg_temp.as_whom() as email, 'n'::text as name`],
      [`select email from app_private.user_identity($1)`, [b.userId]],
    ]);
    // Before the fix: [{ email: 'postgres reads 1 sealed private keys' }] — the definer (a superuser
    // in the embedded setup) ran the caller's function: ALTER ROLE specwright_app SUPERUSER works too.
    expect(rows).not.toContainEqual({ email: expect.stringMatching(/reads/) });
  });

  it("issues no credential key to another tenant's organization (a temporary organizations table)", async () => {
    const rows = await inTenantA([
      [`create temp table organizations (id uuid, tenant_id uuid)`],
      [`insert into pg_temp.organizations values ($1, $2)`, [b.organizationId, a.tenantId]],
      [`select key_id from app_private.issue_organization_credential_key($1, 'planted', 'pk', 'sealed', 'tag')`, [b.organizationId]],
    ]);
    expect(rows).toEqual([]);
  });

  it("lets no execution of A run B's kit (temporary kits and kit_versions tables past the trigger)", async () => {
    const ran = inTenantA([
      [`create temp table kits as select '${b.kitId}'::uuid as id, null::uuid as tenant_id`],
      [`create temp table kit_versions as select '${b.versionId}'::uuid as id, null::uuid as tenant_id`],
      [
        `insert into public.kit_executions (tenant_id, organization_id, project_id, kit_row_id, kit_version_id, input) values ($1, $2, $3, $4, $5, '{}') returning kit_row_id`,
        [a.tenantId, a.organizationId, a.projectId, b.kitId, b.versionId],
      ],
    ]);
    // Before the fix: [{ kit_row_id: <B's kit> }]: the worker, as the owner, then runs B's kit for A.
    await expect(ran).rejects.toMatchObject({ code: '23503' });
  });
});
