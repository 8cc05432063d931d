import type { Socket } from 'node:net';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparingPool, sentAhead, sentBehind } from '../../control-plane/db/prepared-statements.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

let pool: pg.Pool;
let db: Kysely<any>;
let owner: pg.Pool;
let pipelinedPool: pg.Pool;
let pipelined: Kysely<any>;
beforeAll(async () => {
  const database = await createTestDatabase();
  owner = new pg.Pool({ connectionString: database.ownerUrl, max: 1 });
  await owner.query('create table gadgets (id int primary key, name text)');
  await owner.query(`insert into gadgets values (1, 'one'), (2, 'two')`);
  pool = new pg.Pool({ connectionString: database.ownerUrl, max: 1 });
  db = new Kysely<any>({ dialect: new PostgresDialect({ pool: preparingPool(pool, { maxStatements: 2 }) }) });
  pipelinedPool = new pg.Pool({ connectionString: database.ownerUrl, max: 1, pipeline: true } as pg.PoolConfig);
  pipelined = new Kysely<any>({ dialect: new PostgresDialect({ pool: preparingPool(pipelinedPool) }) });
});
afterAll(async () => {
  await db?.destroy();
  await pipelined?.destroy();
  await owner?.end();
});

const preparedOnThisConnection = () => sql<{ statement: string }>`select statement from pg_prepared_statements order by prepare_time`.execute(db).then((r) => r.rows.map((row) => row.statement));

describe('prepared statements', () => {
  it('prepares each parameterised statement once per connection and leaves the rest unnamed, up to the bound', async () => {
    for (const id of [1, 2, 1]) expect(await db.selectFrom('gadgets').select('name').where('id', '=', id).executeTakeFirst()).toEqual({ name: id === 1 ? 'one' : 'two' });
    await db.selectFrom('gadgets').selectAll().where('name', '=', 'two').execute();
    await db.selectFrom('gadgets').select('id').where('name', '=', 'one').execute(); // a third text: past the bound of 2
    await sql`select count(*) from gadgets`.execute(db); // no parameters
    expect(await preparedOnThisConnection()).toEqual([
      'select "name" from "gadgets" where "id" = $1',
      'select * from "gadgets" where "name" = $1',
    ]);
  });

  it('replaces a connection whose prepared select * went stale when its table changed', async () => {
    const read = () => db.selectFrom('gadgets').selectAll().where('name', '=', 'one').execute();
    expect(await read()).toEqual([{ id: 1, name: 'one' }]);
    await owner.query('alter table gadgets add column colour text');
    await expect(read()).rejects.toThrow(/cached plan must not change result type/);
    expect(await read()).toEqual([{ id: 1, name: 'one', colour: null }]);
  });
});

describe('a statement sent behind', () => {
  it('frees the connection at once and leaves with the next transaction\'s first write, ending its own transaction first', async () => {
    const client = await pipelinedPool.connect();
    const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
    client.release();
    let flushes = 0;
    const originals = { _write: socket._write, _writev: socket._writev };
    for (const method of ['_write', '_writev'] as const) {
      socket[method] = ((...args: unknown[]) => {
        flushes += 1;
        (originals[method] as (...a: unknown[]) => void).apply(socket, args);
      }) as never;
    }
    try {
      await pipelined.connection().execute(async (connection) => {
        await sql.raw("begin; select set_config('app.example', 'first', true)").execute(connection);
        await sql.raw(sentBehind('commit')).execute(connection);
      });
      // The pool has one connection: this transaction gets it while the COMMIT is still unsent.
      const setting = await pipelined.connection().execute(async (connection) => {
        await sql.raw(sentAhead('begin')).execute(connection);
        const { rows } = await sql<{ setting: string }>`select current_setting(${'app.example'}, true) as setting`.execute(connection);
        await sql`commit`.execute(connection);
        return rows[0]!.setting;
      });
      // The first transaction's setting ended with its COMMIT, which PostgreSQL ran first.
      expect(setting).toBe('');
      // The first BEGIN; then its COMMIT with the next BEGIN and select in one write; the last COMMIT.
      expect(flushes).toBe(3);
    } finally {
      Object.assign(socket, originals);
    }
  });

  it('still leaves when nothing follows it on the connection', async () => {
    await pipelined.connection().execute(async (connection) => {
      await sql.raw("begin; select pg_advisory_xact_lock(8)").execute(connection);
      await sql.raw(sentBehind('commit')).execute(connection);
    });
    // The lock goes with the transaction: another session gets it once the COMMIT has run.
    const { rows } = await owner.query<{ locked: boolean }>('select pg_advisory_lock(8) is not null as locked');
    await owner.query('select pg_advisory_unlock(8)');
    expect(rows).toEqual([{ locked: true }]);
  });
});

describe('statements sent ahead', () => {
  it('on a pipelining pool, returns before PostgreSQL answers and is answered with the next statement', async () => {
    const holder = await owner.connect();
    try {
      await holder.query('select pg_advisory_lock(7)');
      await pipelined.connection().execute(async (connection) => {
        // Blocks in PostgreSQL until the holder lets go; the call does not wait for that.
        await sql.raw(sentAhead('select pg_advisory_lock(7)')).execute(connection);
        await holder.query('select pg_advisory_unlock(7)');
        const { rows } = await sql<{ released: boolean }>`select pg_advisory_unlock(7) as released`.execute(connection);
        expect(rows).toEqual([{ released: true }]);
      });
    } finally {
      holder.release();
    }
  });

  it('leaves in the same write to the socket as the next statement', async () => {
    const client = await pipelinedPool.connect();
    const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
    client.release();
    const flushes = { count: 0 };
    const countFlushes = (method: '_write' | '_writev') => {
      const original = socket[method] as (...args: unknown[]) => void;
      socket[method] = ((...args: unknown[]) => {
        flushes.count += 1;
        original.apply(socket, args);
      }) as never;
      return () => void (socket[method] = original as never);
    };
    const restore = [countFlushes('_write'), countFlushes('_writev')];
    try {
      await pipelined.connection().execute(async (connection) => {
        await sql.raw(sentAhead('begin')).execute(connection);
        await sql.raw(sentAhead("select set_config('app.example', 'x', true)")).execute(connection);
        const { rows } = await sql<{ setting: string }>`select current_setting(${'app.example'}) as setting`.execute(connection);
        expect(rows).toEqual([{ setting: 'x' }]);
        expect(flushes.count).toBe(1);
        await sql`commit`.execute(connection);
      });
    } finally {
      for (const undo of restore) undo();
    }
  });

  it("makes its failure the next statement's, and leaves the connection usable", async () => {
    await pipelined.connection().execute(async (connection) => {
      await sql.raw(sentAhead('select 1/0')).execute(connection);
      await expect(sql`select 'never reported' as answer`.execute(connection)).rejects.toThrow(/division by zero/);
      expect((await sql<{ answer: number }>`select ${2}::int as answer`.execute(connection)).rows).toEqual([{ answer: 2 }]);
    });
  });

  it('runs like any statement where the pool does not pipeline', async () => {
    expect((await sql.raw<{ two: number }>(sentAhead('select 2 as two')).execute(db)).rows).toEqual([{ two: 2 }]);
  });
});
