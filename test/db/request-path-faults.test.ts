import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type DatabaseHandle } from '../../control-plane/db/kysely-client.ts';
import { isDatabaseUnavailable } from '../../control-plane/db/postgres-errors.ts';
import { sentAhead } from '../../control-plane/db/prepared-statements.ts';
import { inTenantTransaction } from '../../control-plane/db/tenant-transaction.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

let ownerUrl: string;
let appUrl: string;
let app: DatabaseHandle;
let tenantA: string;
let tenantB: string;
beforeAll(async () => {
  const database = await createTestDatabase();
  ownerUrl = database.ownerUrl;
  appUrl = database.appUrl;
  // The service's request pool, cut down to one connection: every user below shares it.
  app = createDatabase(appUrl, { prepareStatements: true, max: 1, applicationName: 'faults-shared' });
  tenantA = (await ownerQuery(ownerUrl, `insert into tenants (name) values ('A') returning id`))[0].id;
  tenantB = (await ownerQuery(ownerUrl, `insert into tenants (name) values ('B') returning id`))[0].id;
});
afterAll(async () => {
  await app?.db.destroy();
});

type Setting = { tenant: string | null; readOnly: string; backend: number };
const SETTING = sql<Setting>`select current_setting('app.tenant_id', true) as tenant, current_setting('transaction_read_only') as "readOnly", pg_backend_pid() as backend`;
const clientsOf = (pool: pg.Pool) => (pool as unknown as { _clients: pg.Client[] })._clients;
const socketOf = (client: pg.Client) => (client as unknown as { connection: { stream: Socket } }).connection.stream;

describe('a read-only COMMIT sent behind, then the next user of the connection', () => {
  it('a request transaction for another tenant sees only its own tenant', async () => {
    for (let round = 0; round < 20; round += 1) {
      const [first, second] = round % 2 === 0 ? [tenantA, tenantB] : [tenantB, tenantA];
      const seenFirst = await inTenantTransaction(app.db, first, { readOnly: true }, async (db) => (await SETTING.execute(db)).rows[0]!);
      // Same turn as the answer: the COMMIT has not left yet.
      const seenSecond = await inTenantTransaction(app.db, second, { readOnly: round % 3 === 0 }, async (db) => (await SETTING.execute(db)).rows[0]!);
      expect(seenFirst.tenant).toBe(first);
      expect(seenSecond.tenant).toBe(second);
      expect(seenSecond.backend).toBe(seenFirst.backend);
    }
  });

  it('a batched single statement runs outside that transaction, with no tenant', async () => {
    for (let round = 0; round < 10; round += 1) {
      const seen = await inTenantTransaction(app.db, tenantA, { readOnly: true }, async (db) => (await SETTING.execute(db)).rows[0]!);
      const after = (await app.batches.query({ text: SETTING.compile(app.db).sql })).rows[0] as Setting;
      const viaKysely = (await SETTING.execute(app.batchedDb)).rows[0]!;
      const outside = (await SETTING.execute(app.db)).rows[0]!;
      expect(seen).toMatchObject({ tenant: tenantA, readOnly: 'on' });
      for (const s of [after, viaKysely, outside]) {
        expect(s.tenant ?? '').toBe('');
        expect(s.readOnly).toBe('off');
        expect(s.backend).toBe(seen.backend);
      }
    }
  });

  it('under concurrency, every transaction and batched statement sees its own tenant or none', async () => {
    await ownerQuery(ownerUrl, `insert into projects (tenant_id, name) values ($1, 'Of A'), ($2, 'Of B')`, [tenantA, tenantB]);
    const visible = sql<{ tenant_id: string }>`select distinct tenant_id from projects`;
    const checks = Array.from({ length: 300 }, async (_, index) => {
      const tenant = index % 2 === 0 ? tenantA : tenantB;
      if (index % 5 === 0) {
        const { rows } = await app.batches.query({ text: SETTING.compile(app.db).sql });
        expect(rows[0].tenant ?? '').toBe('');
        expect(rows[0].readOnly).toBe('off');
        return;
      }
      const seen = await inTenantTransaction(app.db, tenant, { readOnly: index % 3 !== 0 }, async (db) => ({
        setting: (await SETTING.execute(db)).rows[0]!.tenant,
        tenants: (await visible.execute(db)).rows.map((row) => row.tenant_id),
      }));
      expect(seen).toEqual({ setting: tenant, tenants: [tenant] });
    });
    await Promise.all(checks);
  });

  it("the next transaction's snapshot is its own, not the read-only one's", async () => {
    const count = () => sql<{ n: number }>`select count(*)::int as n from projects`;
    const before = await inTenantTransaction(app.db, tenantA, { readOnly: true }, async (db) => (await count().execute(db)).rows[0]!.n);
    await ownerQuery(ownerUrl, `insert into projects (tenant_id, name) values ($1, 'New')`, [tenantA]);
    const after = await inTenantTransaction(app.db, tenantA, { readOnly: true }, async (db) => (await count().execute(db)).rows[0]!.n);
    expect(after).toBe(before + 1);
  });
});

describe('a connection lost while a COMMIT is sent behind', () => {
  it('fails the next user as the database being unavailable, and is dropped from the pool', async () => {
    await inTenantTransaction(app.db, tenantA, { readOnly: true }, async (db) => SETTING.execute(db));
    // The COMMIT is still corked: the connection breaks under it (a restart, a network cut).
    const [client] = clientsOf(app.pool);
    socketOf(client!).destroy();
    const next = inTenantTransaction(app.db, tenantB, { readOnly: true }, async (db) => (await SETTING.execute(db)).rows[0]!);
    const outcome = await next.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    if ('error' in outcome) expect(isDatabaseUnavailable(outcome.error), String(outcome.error)).toBe(true);
    else expect(outcome.value.tenant).toBe(tenantB);
    // Either way, the next request is served on a fresh connection.
    const again = await inTenantTransaction(app.db, tenantB, { readOnly: true }, async (db) => (await SETTING.execute(db)).rows[0]!);
    expect(again.tenant).toBe(tenantB);
  });

  it('terminated by PostgreSQL right after the COMMIT left: the next user sees SERVICE_UNAVAILABLE-class errors only', async () => {
    for (let round = 0; round < 10; round += 1) {
      const seen = await inTenantTransaction(app.db, tenantA, { readOnly: true }, async (db) => (await SETTING.execute(db)).rows[0]!);
      await ownerQuery(ownerUrl, 'select pg_terminate_backend($1)', [seen.backend]);
      const outcome = await inTenantTransaction(app.db, tenantB, { readOnly: true }, async (db) => (await SETTING.execute(db)).rows[0]!).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      if ('error' in outcome) expect(isDatabaseUnavailable(outcome.error), String(outcome.error)).toBe(true);
      else expect(outcome.value.backend).not.toBe(seen.backend);
    }
  });
});

describe('a batch whose connection is lost', () => {
  it('fails each statement as unavailable and the pool replaces the connection', async () => {
    const { rows } = await app.batches.query({ text: 'select pg_backend_pid() as pid' });
    const pid = rows[0].pid as number;
    const killer = ownerQuery(ownerUrl, 'select pg_sleep(0.2), pg_terminate_backend($1)', [pid]);
    const outcomes = await Promise.allSettled([
      app.batches.query({ text: 'select pg_sleep(1)' }),
      app.batches.query({ text: 'select 1 as one' }),
      app.batches.query({ text: 'select $1::int as two', values: [2] }),
    ]);
    await killer;
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      if (outcome.status === 'rejected') expect(isDatabaseUnavailable(outcome.reason), String(outcome.reason)).toBe(true);
    }
    expect((await app.batches.query({ text: 'select 3 as three' })).rows).toEqual([{ three: 3 }]);
  });
});

describe('a statement sent ahead that nothing followed', () => {
  // Its connection is dropped on release; while its socket stayed corked, pg waited forever for
  // the answer before closing it: the session (and the process's socket) stayed open for good.
  it('does not leave its connection open forever', async () => {
    const handle = createDatabase(appUrl, { prepareStatements: true, max: 1, applicationName: 'faults-ahead' });
    await handle.db.connection().execute(async (connection) => {
      await sql.raw(sentAhead('select 1')).execute(connection);
    });
    const sessions = () => countRows(ownerUrl, `pg_stat_activity where application_name = 'faults-ahead'`);
    const deadline = Date.now() + 3_000;
    while ((await sessions()) > 0 && Date.now() < deadline) await sleep(50);
    expect(await sessions()).toBe(0);
    await handle.db.destroy();
  });
});

describe('a pool ended while a COMMIT is sent behind', () => {
  it('ends, closing the connection once the COMMIT has run', async () => {
    const handle = createDatabase(appUrl, { prepareStatements: true, max: 1, applicationName: 'faults-ending' });
    await inTenantTransaction(handle.db, tenantA, { readOnly: true }, async (db) => SETTING.execute(db));
    await handle.db.destroy();
    const sessions = () => countRows(ownerUrl, `pg_stat_activity where application_name = 'faults-ending'`);
    const deadline = Date.now() + 3_000;
    while ((await sessions()) > 0 && Date.now() < deadline) await sleep(50);
    expect(await sessions()).toBe(0);
  });
});

describe('work that issues no statement', () => {
  it('read-only or not, returning or throwing, completes and leaves the connection usable', async () => {
    for (const readOnly of [true, false]) {
      expect(await inTenantTransaction(app.db, tenantA, { readOnly }, async () => 'nothing')).toBe('nothing');
      await expect(inTenantTransaction(app.db, tenantA, { readOnly }, async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    }
    const seen = await inTenantTransaction(app.db, tenantB, { readOnly: true }, async (db) => (await SETTING.execute(db)).rows[0]!);
    expect(seen.tenant).toBe(tenantB);
  });
});

describe('a COMMIT sent behind while the next user of its connection has not sent its first statement', () => {
  // The next user's BEGIN, sent ahead, corked the socket a second time: the COMMIT (and the lock,
  // snapshot and table locks its transaction held) waited for that user's first statement, which
  // here waits for the lock: a deadlock PostgreSQL cannot see, ended only by lock_timeout.
  it('still leaves by the end of the turn, releasing what the read-only transaction held', async () => {
    const first = inTenantTransaction(app.db, tenantA, { readOnly: true }, async (db) => {
      await sql`select pg_advisory_xact_lock(${42})`.execute(db);
    });
    await first;
    // The pool has one connection: this transaction gets it while the COMMIT is still unsent, and
    // waits (on anything but this connection) before its first statement.
    let otherGotTheLock = false;
    const second = inTenantTransaction(app.db, tenantB, { readOnly: false }, async (db) => {
      const waiter = new pg.Client({ connectionString: ownerUrl });
      await waiter.connect();
      try {
        await waiter.query(`set lock_timeout = '2s'`);
        otherGotTheLock = await waiter.query('select pg_advisory_lock(42)').then(
          () => true,
          () => false,
        );
      } finally {
        await waiter.end();
      }
      return (await SETTING.execute(db)).rows[0]!;
    });
    expect((await second).tenant).toBe(tenantB);
    expect(otherGotTheLock).toBe(true);
  });
});

describe('statement batches on the service pool', () => {
  it("share a connection with the request pool's prepared statements without a name clash", async () => {
    await inTenantTransaction(app.db, tenantA, { readOnly: true }, (db) => db.selectFrom('projects').select('id').where('name', '=', 'x').execute());
    await app.batchedDb.selectFrom('tenants').select('name').where('id', '=', tenantA).execute();
    await app.batches.query({ text: 'select $1::text as t', values: ['x'], name: 'own' });
    const { rows } = await app.batches.query({ text: 'select name from pg_prepared_statements order by name' });
    const names = rows.map((row) => row.name as string);
    expect(names.some((name) => name.startsWith('kysely_'))).toBe(true);
    expect(names.some((name) => name.startsWith('single_'))).toBe(true);
  });

  it('replace a connection whose prepared statement went stale, failing it once', async () => {
    await ownerQuery(ownerUrl, `create table gadgets (id int primary key, name text); insert into gadgets values (1, 'one'); grant select on gadgets to specwright_app`);
    const read = () => app.batchedDb.selectFrom('gadgets' as never).selectAll().where('id' as never, '=', 1 as never).execute();
    expect(await read()).toEqual([{ id: 1, name: 'one' }]);
    await ownerQuery(ownerUrl, 'alter table gadgets add column colour text');
    // Once per connection (for every statement of the batch that met it), as on the request pool.
    const outcomes = await Promise.allSettled([read(), read()]);
    expect(outcomes).toMatchObject([{ status: 'rejected', reason: { code: '0A000' } }, { status: 'rejected', reason: { code: '0A000' } }]);
    expect(await read()).toEqual([{ id: 1, name: 'one', colour: null }]);
  });

  it('fail a statement pending when the pool ends, without hanging', async () => {
    const handle = createDatabase(appUrl, { prepareStatements: true, max: 1 });
    const pending = handle.batches.query({ text: 'select 1' });
    await handle.pool.end();
    await expect(pending).rejects.toThrow(/Cannot use a pool after calling end/);
  });
});
