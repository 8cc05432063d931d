import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../control-plane/db/database.ts';
import { listAssignments } from '../../control-plane/domains/agency-projects/agency-projects.repository.ts';
import { listApiKeysOfUser } from '../../control-plane/domains/api-keys/api-keys.repository.ts';
import { listInvitations } from '../../control-plane/domains/invitations/invitations.repository.ts';
import { listCredentials } from '../../control-plane/domains/kit-credentials/kit-credentials.repository.ts';
import { listExecutions, listOutputSummaries } from '../../control-plane/domains/kit-executions/kit-executions.repository.ts';
import { listKits, listVersions } from '../../control-plane/domains/kits/kits.repository.ts';
import { listMembers, listOrganizationsOfUser } from '../../control-plane/domains/organizations/organizations.repository.ts';
import { listProjects } from '../../control-plane/domains/projects/projects.repository.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * Every list the API serves, and its count, as the repositories build them, planned by PostgreSQL as
 * the app role in a tenant's transaction over tables holding 20,000 rows across 40 tenants. A list
 * must reach its rows through an index (no sequential scan reads other tenants' rows), and a list
 * without extra filters must come out of its index in (created_at, id) order, so a page costs its
 * own rows rather than a sort of the tenant's whole list. The plans are PostgreSQL's, not timings:
 * how fast they run belongs in bench/.
 */
const TENANTS = 40;
const ROWS_PER_TENANT = 500;
const page = { limit: 50, offset: 0 };

let database: TestDatabase;
let planner: pg.Client;
let db: Kysely<Database>;
let target: { tenantId: string; organizationId: string; ownerId: string; customerId: string; projectId: string; kitRowId: string; executionId: string };

/** The statements sent through `db` since `statementsOf` last started listening. */
let statements: Array<{ sql: string; values: unknown[] }> = [];

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** A pool whose one client notes each statement and answers it with a made-up row (a page, a count). */
function recordingPool() {
  const client = {
    async query(sql: string, values: unknown[]) {
      statements.push({ sql, values });
      return { command: 'SELECT', rowCount: 1, rows: [{ total: '0' }] };
    },
    release() {},
  };
  return { connect: async () => client, end: async () => {} };
}

/** What `list` sends: its page and its count. */
async function statementsOf(list: () => Promise<unknown>) {
  statements = [];
  await list();
  expect(statements.length).toBeGreaterThan(0);
  return statements;
}

/**
 * The plans of a statement: with its values bound (what PostgreSQL plans for a statement's first
 * runs) and generic (what a prepared statement settles on; the API's pool prepares them).
 */
async function plansOf({ sql, values }: { sql: string; values: unknown[] }) {
  const custom = await planner.query(`explain (format json) ${sql}`, values);
  const generic = await planner.query(`explain (format json, generic_plan) ${sql}`);
  return [
    { kind: 'custom', plan: custom.rows[0]['QUERY PLAN'][0].Plan as PlanNode },
    { kind: 'generic', plan: generic.rows[0]['QUERY PLAN'][0].Plan as PlanNode },
  ];
}

const BIG_TABLES = ['projects', 'agency_project_assignments', 'api_keys', 'customer_invitations', 'kit_credentials', 'kit_executions', 'kits', 'organization_members', 'users', 'kit_outputs'];

/** No plan of the list or its count reads a large table whole (other tenants' rows with it). */
async function expectIndexedPlans(list: () => Promise<unknown>) {
  for (const statement of await statementsOf(list)) {
    for (const { kind, plan } of await plansOf(statement)) {
      const seqScans = nodes(plan).filter((node) => node['Node Type'] === 'Seq Scan' && BIG_TABLES.includes(node['Relation Name'] ?? ''));
      expect(seqScans.map((node) => node['Relation Name']), `${kind} plan of ${statement.sql}\n${JSON.stringify(plan, null, 1)}`).toEqual([]);
    }
  }
}

/**
 * An index hands the page out in (created_at, id) order with its filters applied: planned with
 * sorting disabled, the page's statement (the ordered one) needs no Sort. Whether PostgreSQL
 * prefers that index over sorting a small list is its cost model's business; that it can is this.
 */
async function expectPageInIndexOrder(list: () => Promise<unknown>) {
  const pages = (await statementsOf(list)).filter(({ sql }) => / order by /i.test(sql));
  expect(pages.length).toBeGreaterThan(0);
  await planner.query('set local enable_sort = off');
  try {
    for (const statement of pages) {
      for (const { kind, plan } of await plansOf(statement)) {
        expect(nodes(plan).map((node) => node['Node Type']), `${kind} plan of ${statement.sql}\n${JSON.stringify(plan, null, 1)}`).not.toContain('Sort');
      }
    }
  } finally {
    await planner.query('set local enable_sort = on');
  }
}

/** Both of the above. */
async function expectIndexedInOrder(list: () => Promise<unknown>) {
  await expectIndexedPlans(list);
  await expectPageInIndexOrder(list);
}

beforeAll(async () => {
  database = await createTestDatabase();
  const sql = (text: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, text, values);
  // Forty tenants, each with an owner, an organization, 500 customers (members) and 500 of each listed row.
  await sql(`
    insert into tenants (name) select 'Tenant ' || g from generate_series(1, ${TENANTS}) g;
    insert into users (tenant_id, email, name) select id, 'owner-' || id || '@example.test', 'Owner' from tenants;
    insert into organizations (tenant_id, name, slug, owner_id)
      select u.tenant_id, 'Org', 'org-' || u.tenant_id, u.id from users u;
    insert into organization_members (tenant_id, organization_id, user_id, role)
      select o.tenant_id, o.id, o.owner_id, 'owner' from organizations o;
    insert into users (tenant_id, email, name)
      select t.id, 'customer-' || g || '-' || t.id || '@example.test', 'Customer' from tenants t, generate_series(1, ${ROWS_PER_TENANT}) g;
    insert into organization_members (tenant_id, organization_id, user_id, role, joined_at)
      select u.tenant_id, o.id, u.id, 'customer', now() - random() * interval '300 days'
        from users u join organizations o on o.tenant_id = u.tenant_id where u.name = 'Customer';
    insert into projects (tenant_id, organization_id, name, created_by, created_at, status)
      select o.tenant_id, o.id, 'Project ' || g, o.owner_id, now() - random() * interval '300 days', (array['active', 'completed', 'archived'])[1 + g % 3]
        from organizations o, generate_series(1, ${ROWS_PER_TENANT}) g;
    insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id, created_at)
      select p.tenant_id, p.organization_id, p.id, c.user_id, p.created_at
        from (select p.*, row_number() over (partition by tenant_id order by id) n from projects p) p
        join (select m.*, row_number() over (partition by tenant_id order by id) n from organization_members m where role = 'customer') c
          on c.tenant_id = p.tenant_id and c.n = p.n;
    insert into api_keys (tenant_id, user_id, name, prefix, key_hash, created_at, revoked_at)
      select o.tenant_id, o.owner_id, 'Key ' || g, 'p' || md5(o.id || ':' || g), 'h', now() - random() * interval '300 days',
             case when g % 2 = 0 then now() end
        from organizations o, generate_series(1, ${ROWS_PER_TENANT}) g;
    insert into customer_invitations (tenant_id, organization_id, email, token_hash, expires_at, invited_by, created_at)
      select o.tenant_id, o.id, 'invitee-' || g || '@example.test', md5(o.id || ':' || g), now() + interval '7 days', o.owner_id, now() - random() * interval '300 days'
        from organizations o, generate_series(1, ${ROWS_PER_TENANT}) g;
    insert into kits (tenant_id, organization_id, kit_id, display_name, kit_type, platform_name, platform_category)
      values (null, null, 'built-in', 'Built in', 'file', 'p', 'c');
    insert into kit_versions (tenant_id, kit_row_id, version, manifest, files, checksum)
      select null, id, '1.0.0', '{}', '{}', 'x' from kits;
    update kits set latest_version_id = (select id from kit_versions);
    insert into kits (tenant_id, organization_id, kit_id, display_name, kit_type, platform_name, platform_category, created_at)
      select o.tenant_id, o.id, 'kit-' || g, 'Kit', 'file', 'p', 'c', now() - random() * interval '300 days'
        from organizations o, generate_series(1, ${ROWS_PER_TENANT}) g;
    insert into kit_executions (tenant_id, organization_id, project_id, kit_row_id, kit_version_id, status, input, created_at)
      select p.tenant_id, p.organization_id, p.id, v.kit_row_id, v.id, 'completed', '{}', p.created_at
        from projects p, kit_versions v;
    insert into kit_outputs (tenant_id, execution_id, output_id, filename, output_type, content_type, content, status, content_size_bytes)
      select e.tenant_id, e.id, 'readme', 'README.md', 'markdown', 'text/markdown', 'x', 'valid', 1 from kit_executions e;
    insert into kit_credentials (tenant_id, organization_id, project_id, kit_id, credential_type, key_id, sealed, created_at)
      select p.tenant_id, p.organization_id, p.id, 'built-in', 'token', 'k1', 's', p.created_at from projects p;
    analyze;
  `);
  const [row] = await sql(`
    select o.tenant_id, o.id as organization_id, o.owner_id,
           (select user_id from organization_members m where m.organization_id = o.id and role = 'customer' order by id limit 1) as customer_id,
           (select id from projects p where p.organization_id = o.id order by id limit 1) as project_id,
           (select id from kits where organization_id is null) as kit_row_id,
           (select e.id from kit_executions e where e.organization_id = o.id order by id limit 1) as execution_id
      from organizations o order by o.id limit 1`);
  target = {
    tenantId: row.tenant_id,
    organizationId: row.organization_id,
    ownerId: row.owner_id,
    customerId: row.customer_id,
    projectId: row.project_id,
    kitRowId: row.kit_row_id,
    executionId: row.execution_id,
  };
  // As every request: the app role, in a read-only transaction for the tenant, row-level security on.
  planner = new pg.Client({ connectionString: database.appUrl });
  await planner.connect();
  await planner.query('begin isolation level repeatable read, read only');
  await planner.query(`select set_config('app.tenant_id', $1, true)`, [target.tenantId]);
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: recordingPool() as never }) });
}, 120_000);

afterAll(async () => {
  await planner?.query('rollback').catch(() => {});
  await planner?.end();
});

describe("each list the API serves reads its tenant's rows through an index", () => {
  it('projects (all, by status, and as a member or customer sees them)', async () => {
    await expectIndexedInOrder(() => listProjects(db, { tenantId: target.tenantId }, page));
    await expectIndexedPlans(() => listProjects(db, { tenantId: target.tenantId }, { ...page, status: 'archived' }));
    await expectIndexedPlans(() => listProjects(db, { tenantId: target.tenantId, userId: target.ownerId }, page));
    await expectIndexedPlans(() => listProjects(db, { tenantId: target.tenantId, userId: target.customerId }, page));
  });

  it('agency project assignments of an organization', async () => {
    await expectIndexedInOrder(() => listAssignments(db, target.tenantId, target.organizationId, page));
  });

  it("a user's API keys (all, and active only)", async () => {
    await expectIndexedInOrder(() => listApiKeysOfUser(db, target.tenantId, target.ownerId, page));
    await expectIndexedPlans(() => listApiKeysOfUser(db, target.tenantId, target.ownerId, { ...page, status: 'active' }));
  });

  it("an organization's invitations (all, and pending only)", async () => {
    await expectIndexedInOrder(() => listInvitations(db, target.tenantId, target.organizationId, undefined, page));
    await expectIndexedPlans(() => listInvitations(db, target.tenantId, target.organizationId, 'pending', page));
  });

  it("an organization's kit credentials (all, and of one project)", async () => {
    await expectIndexedInOrder(() => listCredentials(db, target.tenantId, target.organizationId, page));
    await expectIndexedPlans(() => listCredentials(db, target.tenantId, target.organizationId, { ...page, projectId: target.projectId }));
  });

  it("an organization's kit executions (all, of one project, by status) and an execution's outputs", async () => {
    await expectIndexedInOrder(() => listExecutions(db, target.tenantId, target.organizationId, page));
    await expectIndexedInOrder(() => listExecutions(db, target.tenantId, target.organizationId, { ...page, projectId: target.projectId }));
    await expectIndexedPlans(() => listExecutions(db, target.tenantId, target.organizationId, { ...page, status: 'failed' }));
    await expectIndexedInOrder(() => listOutputSummaries(db, target.tenantId, target.executionId));
  });

  it("an organization's members", async () => {
    await expectIndexedInOrder(() => listMembers(db, target.tenantId, target.organizationId, page));
  });

  // These sort what they find: an organization's own kits and the built-in ones are two ranges of
  // an index, and a user's organizations are found through their memberships; both are small.
  it("kits an organization can use, a kit's versions, and a user's organizations", async () => {
    await expectIndexedPlans(() => listKits(db, target.organizationId, page));
    await expectIndexedPlans(() => listVersions(db, target.kitRowId));
    await expectIndexedPlans(() => listOrganizationsOfUser(db, target.tenantId, target.customerId, page));
  });
});
