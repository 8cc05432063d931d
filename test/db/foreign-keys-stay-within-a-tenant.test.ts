import { beforeAll, describe, expect, it } from 'vitest';
import { down as keysAcrossTenants, up as keysWithinATenant } from '../../migrations/0019_foreign_keys_stay_within_a_tenant.ts';
import { down as withoutFlowTables, up as withFlowTables } from '../../migrations/0029_project_flow_questions_and_answers.ts';
import { down as withoutSpecifications, up as withSpecifications } from '../../migrations/0030_specifications.ts';
import { down as withoutAgentExecutions, up as withAgentExecutions } from '../../migrations/0031_agent_executions_and_calls.ts';
import { down as withoutTasks, up as withTasks } from '../../migrations/0032_tasks_and_their_submissions.ts';
import { down as withoutUserStories, up as withUserStories } from '../../migrations/0033_user_stories.ts';
import { down as withoutTaskOrigins, up as withTaskOrigins } from '../../migrations/0034_tasks_from_flow_answers.ts';
import { asAppRoleInTenant } from '../helpers/app-role-sql.ts';
import { ownerQuery, withOwnerKysely } from '../helpers/owner-sql.ts';
import { describeSchema } from '../helpers/schema-snapshot.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * A foreign key is checked past row-level security: a key naming just `x_id` let the app role, in
 * tenant A's transaction, write a row of A that names B's user, organization or project (a
 * membership of B's user, an assignment of B's project). Each key between two tenant-owned tables
 * names the tenant on both sides, so the row named must be of the same tenant, whoever writes. The
 * catalog is walked, so a key added tomorrow without tenant_id fails here unless declared below.
 */
const SINGLE_COLUMN: Record<string, { why: string; beside?: true }> = {
  kit_executions_kit_row_id_fkey: { why: 'an execution may run a built-in kit (tenant_id null); a trigger refuses a kit of another tenant' },
  kit_executions_kit_version_id_fkey: { why: 'an execution may run a built-in kit version (tenant_id null); a trigger refuses a version of another tenant' },
  kit_versions_kit_row_id_fkey: { why: 'for built-in versions (tenant_id null), which the composite key does not check', beside: true },
  kits_latest_version_fkey: { why: 'for built-in kits (tenant_id null), which the composite key does not check', beside: true },
};

let database: TestDatabase;
const sql = (text: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, text, values);

interface Tenant {
  tenantId: string;
  userId: string;
  organizationId: string;
  projectId: string;
  kitId: string;
  versionId: string;
}
let a: Tenant;
let b: Tenant;
let aCustomerId: string;
let builtIn: { kitId: string; versionId: string };

async function tenant(name: string): Promise<Tenant> {
  const [t] = await sql(`insert into tenants (name) values ($1) returning id`, [name]);
  const [user] = await sql(`insert into users (tenant_id, email, name) values ($1, $2, 'Owner') returning id`, [t.id, `owner@${name}.test`]);
  const [organization] = await sql(`insert into organizations (tenant_id, name, slug, owner_id) values ($1, $2, $2, $3) returning id`, [t.id, name, user.id]);
  await sql(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'owner')`, [t.id, organization.id, user.id]);
  const [project] = await sql(`insert into projects (tenant_id, organization_id, name, created_by) values ($1, $2, 'P', $3) returning id`, [t.id, organization.id, user.id]);
  const [kit] = await sql(
    `insert into kits (tenant_id, organization_id, kit_id, display_name, kit_type, platform_name, platform_category) values ($1, $2, 'own', 'Own', 'file', 'p', 'c') returning id`,
    [t.id, organization.id],
  );
  const [version] = await sql(`insert into kit_versions (tenant_id, kit_row_id, version, manifest, files, checksum) values ($1, $2, '1.0.0', '{}', '{}', 'x') returning id`, [t.id, kit.id]);
  await sql('update kits set latest_version_id = $1 where id = $2', [version.id, kit.id]);
  return { tenantId: t.id, userId: user.id, organizationId: organization.id, projectId: project.id, kitId: kit.id, versionId: version.id };
}

beforeAll(async () => {
  database = await createTestDatabase();
  a = await tenant('a');
  b = await tenant('b');
  [{ id: aCustomerId }] = await sql(`insert into users (tenant_id, email, name) values ($1, 'customer@a.test', 'Customer') returning id`, [a.tenantId]);
  const [kit] = await sql(`insert into kits (kit_id, display_name, kit_type, platform_name, platform_category) values ('built-in', 'Built in', 'file', 'p', 'c') returning id`);
  const [version] = await sql(`insert into kit_versions (kit_row_id, version, manifest, files, checksum) values ($1, '1.0.0', '{}', '{}', 'x') returning id`, [kit.id]);
  await sql('update kits set latest_version_id = $1 where id = $2', [version.id, kit.id]);
  builtIn = { kitId: kit.id, versionId: version.id };
});

/** `text` as a request of tenant A runs it, rolled back: the rows it reached, or the SQLSTATE it failed with. */
const asTenantA = (text: string, values: unknown[] = []) => asAppRoleInTenant(database.appUrl, a.tenantId, text, values);

interface ForeignKey {
  name: string;
  table: string;
  parent: string;
  columns: string[];
  parentColumns: string[];
  onDelete: string;
  setNullColumns: string[];
}

/** Every foreign key from a tenant-owned table (a tenant_id column, row-level security on) to another. */
async function keysBetweenTenantTables(url: string): Promise<ForeignKey[]> {
  return ownerQuery<ForeignKey>(
    url,
    `with tenant_owned as (
       select c.oid from pg_class c
        where c.relnamespace = 'public'::regnamespace and c.relrowsecurity
          and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped))
     select c.conname as name, c.conrelid::regclass::text as table, c.confrelid::regclass::text as parent,
            array(select a.attname::text from unnest(c.conkey) with ordinality k(attnum, ord)
                    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum order by k.ord) as "columns",
            array(select a.attname::text from unnest(c.confkey) with ordinality k(attnum, ord)
                    join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.attnum order by k.ord) as "parentColumns",
            c.confdeltype::text as "onDelete",
            array(select a.attname::text from unnest(coalesce(c.confdelsetcols, '{}')) k(attnum)
                    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum) as "setNullColumns"
       from pg_constraint c
      where c.contype = 'f' and c.connamespace = 'public'::regnamespace
        and c.conrelid in (select oid from tenant_owned) and c.confrelid in (select oid from tenant_owned)
      order by 2, 1`,
  );
}

const pairsTenants = (key: ForeignKey) => key.columns.some((column, i) => column === 'tenant_id' && key.parentColumns[i] === 'tenant_id');

/** What is wrong with the keys between tenant-owned tables: each names the tenant on both sides, or is declared above. */
function problemsWith(keys: ForeignKey[]): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(SINGLE_COLUMN)) if (!keys.some((key) => key.name === name)) problems.push(`${name}: declared single-column but gone`);
  for (const key of keys) {
    const shown = `${key.table}.${key.name} (${key.columns.join(', ')}) -> ${key.parent} (${key.parentColumns.join(', ')})`;
    if (pairsTenants(key)) {
      // SET NULL (or DEFAULT) of a composite key touches only the referencing column, never tenant_id.
      if ((key.onDelete === 'n' || key.onDelete === 'd') && (key.setNullColumns.length === 0 || key.setNullColumns.includes('tenant_id'))) {
        problems.push(`${shown}: ON DELETE SET NULL would null tenant_id too: name the column, SET NULL (${key.columns.filter((c) => c !== 'tenant_id').join(', ')})`);
      }
      continue;
    }
    const declared = SINGLE_COLUMN[key.name];
    if (!declared) {
      problems.push(`${shown}: may name another tenant's row: make it (tenant_id, …) REFERENCES ${key.parent} (tenant_id, …), or declare why not`);
    } else if (declared.beside && !keys.some((other) => other.table === key.table && other.parent === key.parent && pairsTenants(other) && key.columns.every((column) => other.columns.includes(column)))) {
      problems.push(`${shown}: declared as kept beside a composite key, which is missing`);
    }
  }
  return problems;
}

describe('foreign keys between tenant-owned tables', () => {
  it('each names tenant_id on both sides (or is declared single-column, with why), and SET NULL spares tenant_id', async () => {
    const keys = await keysBetweenTenantTables(database.ownerUrl);
    expect(keys.length).toBeGreaterThan(20);
    expect(problemsWith(keys)).toEqual([]);
  });
});

describe("the app role, in tenant A's transaction", () => {
  it("cannot make a membership of A's organization for B's user", async () => {
    const insert = `insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`;
    expect(await asTenantA(insert, [a.tenantId, a.organizationId, b.userId])).toBe('23503');
    expect(await asTenantA(insert, [a.tenantId, a.organizationId, aCustomerId])).toBe(1);
    expect(await asTenantA('update organization_members set user_id = $1 where organization_id = $2', [b.userId, a.organizationId])).toBe('23503');
    expect(await asTenantA(insert, [a.tenantId, b.organizationId, aCustomerId])).toBe('23503');
  });

  it("cannot assign B's project to a customer of A", async () => {
    const insert = 'insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)';
    expect(await asTenantA(insert, [a.tenantId, a.organizationId, b.projectId, aCustomerId])).toBe('23503');
    expect(await asTenantA(insert, [a.tenantId, a.organizationId, a.projectId, b.userId])).toBe('23503');
    expect(await asTenantA(insert, [a.tenantId, a.organizationId, a.projectId, aCustomerId])).toBe(1);
  });

  it("cannot put a project in B's organization, or credit B's user with it", async () => {
    const insert = `insert into projects (tenant_id, organization_id, name, created_by) values ($1, $2, 'P', $3)`;
    expect(await asTenantA(insert, [a.tenantId, b.organizationId, a.userId])).toBe('23503');
    expect(await asTenantA(insert, [a.tenantId, a.organizationId, b.userId])).toBe('23503');
    expect(await asTenantA(insert, [a.tenantId, a.organizationId, a.userId])).toBe(1);
  });

  it("cannot run B's kit or kit version; a built-in kit or its own still runs", async () => {
    const insert = `insert into kit_executions (tenant_id, organization_id, project_id, kit_row_id, kit_version_id, input) values ($1, $2, $3, $4, $5, '{}')`;
    const on = [a.tenantId, a.organizationId, a.projectId];
    expect(await asTenantA(insert, [...on, b.kitId, b.versionId])).toBe('23503');
    expect(await asTenantA(insert, [...on, a.kitId, b.versionId])).toBe('23503');
    expect(await asTenantA(insert, [...on, b.kitId, a.versionId])).toBe('23503');
    expect(await asTenantA(insert, [...on, builtIn.kitId, builtIn.versionId])).toBe(1);
    expect(await asTenantA(insert, [...on, a.kitId, a.versionId])).toBe(1);
  });
});

describe('ON DELETE, kept', () => {
  it('runs on PostgreSQL 15 or later, which can SET NULL one column of a composite key', async () => {
    const [{ server_version_num }] = await sql('show server_version_num');
    expect(Number(server_version_num)).toBeGreaterThanOrEqual(150000);
  });

  it("SET NULL clears only the reference: the row keeps its tenant", async () => {
    const [user] = await sql(`insert into users (tenant_id, email, name) values ($1, 'leaving@a.test', 'Leaving') returning id`, [a.tenantId]);
    const [project] = await sql(`insert into projects (tenant_id, organization_id, name, created_by) values ($1, $2, 'Theirs', $3) returning id`, [a.tenantId, a.organizationId, user.id]);
    await sql('delete from users where id = $1', [user.id]);
    expect(await sql('select tenant_id, organization_id, created_by from projects where id = $1', [project.id])).toEqual([
      { tenant_id: a.tenantId, organization_id: a.organizationId, created_by: null },
    ]);
  });

  it('CASCADE still removes the rows that name what goes', async () => {
    const [user] = await sql(`insert into users (tenant_id, email, name) values ($1, 'member@a.test', 'Member') returning id`, [a.tenantId]);
    await sql(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`, [a.tenantId, a.organizationId, user.id]);
    await sql('delete from users where id = $1', [user.id]);
    expect(await sql('select id from organization_members where user_id = $1', [user.id])).toEqual([]);
  });
});

describe('the migration (0019)', () => {
  it("stops, naming the key and how many rows, on a database whose rows already name another tenant's", async () => {
    const other = await createTestDatabase();
    const owner = (text: string, values: unknown[] = []) => ownerQuery(other.ownerUrl, text, values);
    const [x] = await owner(`insert into tenants (name) values ('x') returning id`);
    const [y] = await owner(`insert into tenants (name) values ('y') returning id`);
    const [xUser] = await owner(`insert into users (tenant_id, email, name) values ($1, 'x@x.test', 'X') returning id`, [x.id]);
    const [yUser] = await owner(`insert into users (tenant_id, email, name) values ($1, 'y@y.test', 'Y') returning id`, [y.id]);
    const [organization] = await owner(`insert into organizations (tenant_id, name, slug, owner_id) values ($1, 'X', 'x', $2) returning id`, [x.id, xUser.id]);

    const migrated = await describeSchema(other.ownerUrl);
    // Migrations run down in reverse: the flow's tables (0029), specifications (0030), agent executions (0031), tasks (0032, with their origins: 0034) and user stories (0033) hold keys within a tenant from the start.
    await withOwnerKysely(other.ownerUrl, withoutTaskOrigins);
    await withOwnerKysely(other.ownerUrl, withoutUserStories);
    await withOwnerKysely(other.ownerUrl, withoutTasks);
    await withOwnerKysely(other.ownerUrl, withoutAgentExecutions);
    await withOwnerKysely(other.ownerUrl, withoutSpecifications);
    await withOwnerKysely(other.ownerUrl, withoutFlowTables);
    await withOwnerKysely(other.ownerUrl, keysAcrossTenants);
    expect(problemsWith(await keysBetweenTenantTables(other.ownerUrl)).length).toBeGreaterThan(20);
    const [crossing] = await owner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member') returning id`, [x.id, organization.id, yUser.id]);

    await expect(withOwnerKysely(other.ownerUrl, keysWithinATenant)).rejects.toThrow(/organization_members\.user_id -> users: 1 row\b/);
    expect(problemsWith(await keysBetweenTenantTables(other.ownerUrl)).length).toBeGreaterThan(20);

    await owner('delete from organization_members where id = $1', [crossing.id]);
    await withOwnerKysely(other.ownerUrl, keysWithinATenant);
    await withOwnerKysely(other.ownerUrl, withFlowTables);
    await withOwnerKysely(other.ownerUrl, withSpecifications);
    await withOwnerKysely(other.ownerUrl, withAgentExecutions);
    await withOwnerKysely(other.ownerUrl, withTasks);
    await withOwnerKysely(other.ownerUrl, withUserStories);
    await withOwnerKysely(other.ownerUrl, withTaskOrigins);
    expect(problemsWith(await keysBetweenTenantTables(other.ownerUrl))).toEqual([]);
    // Down and up again give back the schema the migrations make.
    expect(await describeSchema(other.ownerUrl)).toBe(migrated);
  });
});
