import { beforeAll, describe, expect, it } from 'vitest';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * Walks the catalog for what the app role (every request) may do besides reading and writing rows
 * under row-level security. Each of these would let one request reach past its tenant:
 *  - TRUNCATE skips row-level security (and ON DELETE) altogether: every tenant's rows go.
 *  - REFERENCES lets it make a table whose foreign key probes another's rows; TRIGGER, code on
 *    another's writes; MAINTAIN (PostgreSQL 17+), LOCK, VACUUM FULL, REINDEX of tables every tenant shares.
 *  - A sequence, or graphile-worker's schema, is shared by every tenant and has no policies.
 *  - CREATE on a schema or the database, a role it is a member of, anything it owns: a way out of
 *    what it was granted. Setting session_replication_role would switch every trigger off (a kit
 *    version's immutability, an execution's check that it runs a kit of its own tenant).
 *  - Default privileges grant future objects: they may grant no more than what is checked here.
 * Privileges are read from the ACLs themselves (aclexplode), PUBLIC's (grantee 0) included, so a
 * kind of privilege a later PostgreSQL adds shows up too.
 */
const ROW_COMMANDS = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'];

let database: TestDatabase;
const sql = <T extends Record<string, any> = any>(text: string, values: unknown[] = []) => ownerQuery<T>(database.ownerUrl, text, values);

beforeAll(async () => {
  database = await createTestDatabase();
});

/** Who the app role's privileges come from: itself and PUBLIC (it is a member of no role: checked below). */
const GRANTEES = `(a.grantee = 0 or a.grantee = 'specwright_app'::regrole)`;

describe('the app role', () => {
  it('holds no table privilege but SELECT, INSERT, UPDATE and DELETE, on a table or on a column', async () => {
    const tables = await sql(
      `select c.oid::regclass::text as relation, a.privilege_type as privilege
         from pg_class c cross join lateral aclexplode(c.relacl) a
        where ${GRANTEES} and c.relkind in ('r', 'p', 'v', 'm', 'f')
          and c.relnamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
          and a.privilege_type <> all ($1)
        order by 1, 2`,
      [ROW_COMMANDS],
    );
    expect(tables).toEqual([]);
    const columns = await sql(
      `select c.oid::regclass::text || '.' || att.attname as "column", a.privilege_type as privilege
         from pg_attribute att join pg_class c on c.oid = att.attrelid cross join lateral aclexplode(att.attacl) a
        where ${GRANTEES} and c.relnamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
          and a.privilege_type <> all ($1)
        order by 1, 2`,
      [ROW_COMMANDS],
    );
    expect(columns).toEqual([]);
  });

  it('reaches no sequence, and nothing of graphile-worker but through app_private.enqueue_job', async () => {
    const sequences = await sql(
      `select c.oid::regclass::text as sequence from pg_class c
        where c.relkind = 'S' and c.relnamespace not in ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
          and (has_sequence_privilege('specwright_app', c.oid, 'USAGE') or has_sequence_privilege('specwright_app', c.oid, 'SELECT')
               or has_sequence_privilege('specwright_app', c.oid, 'UPDATE'))`,
    );
    expect(sequences).toEqual([]);
    const [worker] = await sql(`select has_schema_privilege('specwright_app', 'graphile_worker', 'USAGE') as usage`);
    expect(worker.usage).toBe(false);
  });

  it('creates nothing: no schema, no object in any schema, is a member of no role and owns nothing', async () => {
    const [database_] = await sql(`select has_database_privilege('specwright_app', current_database(), 'CREATE') as creates`);
    expect(database_.creates).toBe(false);
    const schemas = await sql(`select nspname from pg_namespace where has_schema_privilege('specwright_app', oid, 'CREATE') and nspname not like 'pg_temp%' and nspname not like 'pg_toast_temp%'`);
    expect(schemas).toEqual([]);
    const memberships = await sql(`select roleid::regrole::text as role from pg_auth_members where member = 'specwright_app'::regrole`);
    expect(memberships).toEqual([]);
    const owned = await sql(
      `select 'schema ' || nspname as what from pg_namespace where nspowner = 'specwright_app'::regrole
       union all select 'function ' || oid::regprocedure::text from pg_proc where proowner = 'specwright_app'::regrole
       union all select 'type ' || oid::regtype::text from pg_type where typowner = 'specwright_app'::regrole
         and typnamespace not in (select oid from pg_namespace where nspname like 'pg_temp%' or nspname like 'pg_toast_temp%')`,
    );
    expect(owned).toEqual([]);
  });

  it('cannot switch triggers off (session_replication_role) nor hold a role attribute beyond logging in', async () => {
    const [role] = await sql(
      `select has_parameter_privilege('specwright_app', 'session_replication_role', 'SET') as sets_replication_role,
              rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls
         from pg_roles where rolname = 'specwright_app'`,
    );
    expect(role).toEqual({ sets_replication_role: false, rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolreplication: false, rolbypassrls: false });
  });

  it('is granted by default privileges, on objects made tomorrow, no more than row commands and EXECUTE in app_private', async () => {
    const defaults = await sql(
      `select d.defaclrole::regrole::text as creator, coalesce(d.defaclnamespace::regnamespace::text, '(every schema)') as schema,
              d.defaclobjtype as kind, a.privilege_type as privilege
         from pg_default_acl d cross join lateral aclexplode(d.defaclacl) a
        where ${GRANTEES}
        order by 1, 2, 3, 4`,
    );
    const beyond = defaults.filter((d) => !((d.kind === 'r' && ROW_COMMANDS.includes(d.privilege)) || (d.kind === 'f' && d.schema === 'app_private' && d.privilege === 'EXECUTE')));
    expect(beyond).toEqual([]);
  });
});
