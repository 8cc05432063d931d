import { beforeAll, describe, expect, it } from 'vitest';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * Walks the catalog: every relation in the public schema is either tenant data, which row-level
 * security confines for each of SELECT, INSERT, UPDATE and DELETE, or listed here as deliberately
 * global, with what the app role may do to it. A table or view added tomorrow without either fails.
 *
 * The policies are not FORCEd: they bind every role but a table's owner, and the app role owns
 * nothing (checked below). The owner is the worker's and the migrations' role, which works across
 * tenants by design.
 */
const GLOBAL: Record<string, { why: string; appRole: string[] }> = {
  rate_limits: { why: "counters per caller, shared by every API node (rate-limiter-flexible's layout)", appRole: ['DELETE', 'INSERT', 'SELECT', 'UPDATE'] },
  // Its last_seen_at only (a column grant, migration 0025): a live pool's id is what a forged execution needs.
  worker_heartbeats: { why: 'which workers are alive; requests only read when they last beat (health)', appRole: [] },
  credential_keys: { why: "the server's key ring; read through a definer function only", appRole: [] },
  kysely_migration: { why: 'migration bookkeeping', appRole: [] },
  kysely_migration_lock: { why: 'migration bookkeeping', appRole: [] },
};

/** What confines a write to the transaction's tenant: the whole expression, or the first of an AND. */
const OWN_TENANT = /^\(\(?(tenant_id|id) = app_current_tenant\(\)\)( AND [\s\S]*\))?$/;

let database: TestDatabase;
const sql = <T extends Record<string, any> = any>(text: string, values: unknown[] = []) => ownerQuery<T>(database.ownerUrl, text, values);

beforeAll(async () => {
  database = await createTestDatabase();
});

describe('every relation in the public schema', () => {
  it('is tenant data under row-level security or declared global here', async () => {
    const relations = await sql<{ name: string; kind: string; rls: boolean }>(
      `select c.relname as name, c.relkind::text as kind, c.relrowsecurity as rls
         from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f') order by 1`,
    );
    expect(Object.keys(GLOBAL).filter((name) => !relations.some((relation) => relation.name === name)), 'declared global but gone').toEqual([]);
    const unprotected = relations.filter((relation) => !(relation.name in GLOBAL) && !(relation.rls && (relation.kind === 'r' || relation.kind === 'p')));
    // A view or materialized view reads with its owner's rights, past every policy: none may be tenant data.
    expect(unprotected.map((relation) => `${relation.name} (relkind ${relation.kind})`)).toEqual([]);
  });

  it('that is global grants the app role only what is declared', async () => {
    for (const [table, { appRole }] of Object.entries(GLOBAL)) {
      const grants = await sql(
        `select privilege_type from information_schema.role_table_grants where grantee = 'specwright_app' and table_schema = 'public' and table_name = $1 order by 1`,
        [table],
      );
      expect(grants.map((grant) => grant.privilege_type), table).toEqual(appRole);
    }
  });

  it("that is tenant data has, for each command, a policy the app role meets, and each confines writes to the transaction's tenant", async () => {
    const policies = await sql<{ table: string; name: string; permissive: string; roles: string[]; cmd: string; qual: string | null; with_check: string | null }>(
      `select p.tablename as table, p.policyname as name, p.permissive, p.roles::text[] as roles, p.cmd, p.qual, p.with_check
         from pg_policies p join pg_class c on c.relname = p.tablename and c.relnamespace = 'public'::regnamespace
        where p.schemaname = 'public' and c.relrowsecurity order by 1, 2`,
    );
    const tables = (await sql(`select relname from pg_class where relnamespace = 'public'::regnamespace and relkind in ('r', 'p') and relrowsecurity order by 1`)).map((row) => row.relname as string);
    expect(tables.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const table of tables) {
      for (const command of ['SELECT', 'INSERT', 'UPDATE', 'DELETE']) {
        const applying = policies.filter(
          (policy) => policy.table === table && policy.permissive === 'PERMISSIVE' && (policy.cmd === command || policy.cmd === 'ALL') && policy.roles.some((role) => role === 'public' || role === 'specwright_app'),
        );
        if (applying.length === 0) problems.push(`${table}: no policy lets the app role ${command} (every ${command} is refused: is that meant?)`);
        for (const policy of applying) {
          // USING decides which rows a command reaches; WITH CHECK (USING when absent) which rows it may leave.
          const reached = policy.qual;
          const left = policy.with_check ?? policy.qual;
          if (command === 'SELECT' && !reached?.includes('app_current_tenant()')) problems.push(`${table}.${policy.name}: SELECT not confined to the tenant: ${reached}`);
          if ((command === 'UPDATE' || command === 'DELETE') && !OWN_TENANT.test(reached ?? '')) problems.push(`${table}.${policy.name}: ${command} reaches rows beyond the tenant's own: ${reached}`);
          if ((command === 'INSERT' || command === 'UPDATE') && !OWN_TENANT.test(left ?? '')) problems.push(`${table}.${policy.name}: ${command} may write rows beyond the tenant's own: ${left}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('is out of reach of the app role as an owner: it owns nothing, cannot bypass policies, and cannot create tables', async () => {
    const [role] = await sql(
      `select rolsuper, rolbypassrls, has_schema_privilege('specwright_app', 'public', 'CREATE') as creates
         from pg_roles where rolname = 'specwright_app'`,
    );
    expect(role).toEqual({ rolsuper: false, rolbypassrls: false, creates: false });
    const owned = await sql(
      `select c.relname from pg_class c
        where c.relnamespace = 'public'::regnamespace and pg_has_role('specwright_app', c.relowner, 'USAGE')`,
    );
    expect(owned).toEqual([]);
  });
});
