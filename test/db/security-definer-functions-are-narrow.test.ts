import { beforeAll, describe, expect, it } from 'vitest';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * A SECURITY DEFINER function runs with its owner's rights (the schema owner: every tenant's rows,
 * the key ring, graphile-worker's tables) for whoever may call it. Walked from the catalog, so one
 * added tomorrow is held to the same: it lives in app_private (whose USAGE only the app role has),
 * is not executable by PUBLIC, pins its search path (else the caller's decides which `users` it
 * reads), and builds no SQL from its arguments (EXECUTE / format()).
 */
let database: TestDatabase;
const sql = <T extends Record<string, any> = any>(text: string, values: unknown[] = []) => ownerQuery<T>(database.ownerUrl, text, values);

interface DefinerFunction {
  signature: string;
  schema: string;
  config: string[] | null;
  body: string;
  publicExecutes: boolean;
  language: string;
}
let definers: DefinerFunction[];

beforeAll(async () => {
  database = await createTestDatabase();
  definers = await sql<DefinerFunction>(
    `select p.oid::regprocedure::text as signature, n.nspname as schema, p.proconfig as config, p.prosrc as body, l.lanname as language,
            exists (select 1 from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a where a.grantee = 0 and a.privilege_type = 'EXECUTE') as "publicExecutes"
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace join pg_language l on l.oid = p.prolang
      where p.prosecdef and n.nspname not in ('pg_catalog', 'information_schema')
      order by 1`,
  );
});

describe('every SECURITY DEFINER function', () => {
  it('exists where expected: the ones auth, slugs, jobs and credential keys need', () => {
    expect(definers.length).toBeGreaterThanOrEqual(10);
  });

  it('lives in app_private, which PUBLIC cannot use', async () => {
    expect(definers.filter((f) => f.schema !== 'app_private').map((f) => f.signature)).toEqual([]);
    const [schema] = await sql(`select exists (select 1 from pg_namespace n, aclexplode(n.nspacl) a where n.nspname = 'app_private' and a.grantee = 0) as public_uses`);
    expect(schema.public_uses).toBe(false);
  });

  it('is not executable by PUBLIC', () => {
    expect(definers.filter((f) => f.publicExecutes).map((f) => f.signature)).toEqual([]);
  });

  it('pins its search path to pg_catalog first', () => {
    const unpinned = definers.filter((f) => !(f.config ?? []).some((setting) => /^search_path=pg_catalog(,|$)/.test(setting)));
    expect(unpinned.map((f) => `${f.signature}: ${(f.config ?? []).join(' ') || '(nothing set)'}`)).toEqual([]);
  });

  it('builds no SQL from its arguments', () => {
    // String literals left out: a task named 'kits.execute' is no EXECUTE statement.
    const code = (body: string) => body.replace(/'(?:[^']|'')*'/g, "''");
    const dynamic = definers.filter((f) => (f.language === 'plpgsql' && /\bexecute\b/i.test(code(f.body))) || /\bformat\s*\(|quote_ident|quote_literal/i.test(code(f.body)));
    expect(dynamic.map((f) => f.signature)).toEqual([]);
  });
});
