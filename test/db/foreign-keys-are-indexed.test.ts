import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * A foreign key's referencing side is what PostgreSQL searches on every delete (or key change) of a
 * referenced row: the cascade, the SET NULL, or the check that nothing still points at it. Without
 * an index led by the key's columns, deleting one project, organization or user scans each
 * referencing table whole, once per deleted row, holding its locks meanwhile. The catalog is walked,
 * so a table added tomorrow with an unindexed key fails here.
 */
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});

describe('foreign keys', () => {
  it('each has an index led by its columns (a partial one only if it leaves out just the rows whose key is null)', async () => {
    const unindexed = await ownerQuery<{ key: string }>(
      database.ownerUrl,
      `select format('%s.%s (%s) -> %s', c.conrelid::regclass, c.conname,
                     (select string_agg(a.attname, ', ' order by k.ord) from unnest(c.conkey) with ordinality k(attnum, ord)
                        join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum),
                     c.confrelid::regclass) as key
         from pg_constraint c
        where c.contype = 'f' and c.connamespace = 'public'::regnamespace
          and not exists (
            select 1 from pg_index i
             where i.indrelid = c.conrelid
               and i.indnkeyatts >= cardinality(c.conkey)
               and (select array_agg(x order by x) from unnest((i.indkey::int2[])[0:cardinality(c.conkey) - 1]) x)
                 = (select array_agg(x order by x) from unnest(c.conkey) x)
               and (i.indpred is null
                    or pg_get_expr(i.indpred, i.indrelid) = (select string_agg(format('(%I IS NOT NULL)', a.attname), ' AND ')
                                                               from unnest(c.conkey) k(attnum)
                                                               join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum))
          )
        order by 1`,
    );
    expect(unindexed.map((row) => row.key)).toEqual([]);
  });

  it("each is searched through an index by the lookup PostgreSQL's own foreign-key triggers make", async () => {
    const keys = await ownerQuery<{ table: string; columns: Array<{ name: string; type: string }> }>(
      database.ownerUrl,
      `select c.conrelid::regclass::text as table,
              json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod)) order by k.ord) as columns
         from pg_constraint c
              cross join lateral unnest(c.conkey) with ordinality k(attnum, ord)
              join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum
        where c.contype = 'f' and c.connamespace = 'public'::regnamespace
        group by c.oid, c.conrelid
        order by 1, min(a.attname)`,
    );
    expect(keys.length).toBeGreaterThan(30);
    const client = new pg.Client({ connectionString: database.ownerUrl });
    await client.connect();
    try {
      // Sequential scans made as dear as can be: one that is chosen anyway means no index can serve.
      await client.query('set enable_seqscan = off');
      const scanned: string[] = [];
      for (const { table, columns } of keys) {
        // A composite key (tenant_id, x_id) is searched on all its columns at once, as here.
        const where = columns.map(({ name, type }, i) => `$${i + 1}::${type} operator(pg_catalog.=) ${name}`).join(' and ');
        const lookup = `select 1 from only ${table} x where ${where} for key share of x`;
        const { rows } = await client.query(`explain (format json, generic_plan) ${lookup}`);
        if (JSON.stringify(rows[0]['QUERY PLAN']).includes('"Seq Scan"')) scanned.push(`${table} (${columns.map(({ name }) => name).join(', ')})`);
      }
      expect(scanned).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
