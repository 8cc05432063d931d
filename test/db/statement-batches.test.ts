import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../control-plane/db/postgres-errors.ts';
import { statementBatches, type StatementBatches } from '../../control-plane/db/statement-batches.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

let pipelinedPool: pg.Pool;
let batches: StatementBatches;
beforeAll(async () => {
  const database = await createTestDatabase();
  pipelinedPool = new pg.Pool({ connectionString: database.ownerUrl, max: 4, pipeline: true } as pg.PoolConfig);
  batches = statementBatches(pipelinedPool);
});
afterAll(async () => {
  await pipelinedPool?.end();
});

type Seen = { backend: number; xact: string };
const whoRunsIt = (via: StatementBatches) => via.query({ text: 'select pg_backend_pid() as backend, pg_current_xact_id()::text as xact' }).then((r) => r.rows[0] as Seen);

describe('statement batches', () => {
  it('sends the statements of one turn together on one connection, each in its own transaction', async () => {
    const seen = await Promise.all([whoRunsIt(batches), whoRunsIt(batches), whoRunsIt(batches)]);
    expect(new Set(seen.map((s) => s.backend)).size).toBe(1);
    expect(new Set(seen.map((s) => s.xact)).size).toBe(3);
    // The connection went back to the pool: nothing is held between batches.
    expect(pipelinedPool.idleCount).toBe(pipelinedPool.totalCount);
  });

  it('keeps one failure to its own statement, and the connection usable', async () => {
    const [before, failed, after] = await Promise.allSettled([
      batches.query({ text: 'select $1::int as n', values: [1] }),
      batches.query({ text: 'select 1/0' }),
      batches.query({ text: 'select $1::int as n', values: [3] }),
    ]);
    expect(before).toMatchObject({ status: 'fulfilled', value: { rows: [{ n: 1 }] } });
    expect(failed).toMatchObject({ status: 'rejected', reason: { code: '22012' } });
    expect(after).toMatchObject({ status: 'fulfilled', value: { rows: [{ n: 3 }] } });
    expect((await batches.query({ text: 'select 4 as n' })).rows).toEqual([{ n: 4 }]);
  });

  it('refuses to open a transaction, which would span batches', async () => {
    await expect(batches.query({ text: '  BEGIN' })).rejects.toThrow(/transaction needs a connection of its own/);
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: batches.kyselyPool() }) });
    await expect(db.transaction().execute(async (trx) => sql`select 1`.execute(trx))).rejects.toThrow(/transaction needs a connection of its own/);
  });

  it('runs parameterised statements from Kysely prepared, by name', async () => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: batches.kyselyPool() }) });
    const twice = await Promise.all([1, 2].map((n) => sql<{ n: number }>`select ${n}::int as n`.execute(db)));
    expect(twice.map((r) => r.rows)).toEqual([[{ n: 1 }], [{ n: 2 }]]);
    const { rows } = await batches.query({ text: `select name from pg_prepared_statements where statement = 'select $1::int as n'` });
    expect(rows).toEqual([{ name: 'single_0' }]);
  });

  it('fails every statement of a batch whose connection cannot be had', async () => {
    const unreachable = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', pipeline: true } as pg.PoolConfig);
    const away = statementBatches(unreachable);
    const outcomes = await Promise.allSettled([away.query({ text: 'select 1' }), away.query({ text: 'select 2' })]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    await unreachable.end();
  });

  it('fails a statement still waiting for its batch when the pool ends as the database being away', async () => {
    const ending = new pg.Pool({ connectionString: pipelinedPool.options.connectionString, pipeline: true } as pg.PoolConfig);
    const waiting = statementBatches(ending).query({ text: 'select 1' });
    await ending.end();
    const error = await waiting.then(() => undefined, (reason: unknown) => reason);
    expect(isDatabaseUnavailable(error)).toBe(true);
  });
});
