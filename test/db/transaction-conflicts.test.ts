import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDatabase, type DatabaseHandle } from '../../control-plane/db/kysely-client.ts';
import { inTenantTransaction, withTenant } from '../../control-plane/db/tenant-transaction.ts';
import { toWireError } from '../../control-plane/errors/coerce-error.ts';
import type { Context } from '../../control-plane/trpc/context.ts';
import { t } from '../../control-plane/trpc/init.ts';
import { authedProcedure } from '../../control-plane/trpc/procedures.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

let ownerUrl: string;
let app: DatabaseHandle;
let tenantId: string;
beforeAll(async () => {
  const database = await createTestDatabase();
  ownerUrl = database.ownerUrl;
  // The service's own request pool: prepared statements, BEGIN sent ahead.
  app = createDatabase(database.appUrl, { prepareStatements: true });
  tenantId = (await ownerQuery(ownerUrl, `insert into tenants (name) values ('Conflicts') returning id`))[0].id;
});
afterAll(async () => {
  await app?.db.destroy();
});

async function newProject(name: string): Promise<string> {
  return (await ownerQuery(ownerUrl, 'insert into projects (tenant_id, name) values ($1, $2) returning id', [tenantId, name]))[0].id;
}
const namesOf = async (...ids: string[]) => (await ownerQuery(ownerUrl, 'select name from projects where id = any($1) order by name', [ids])).map((row) => row.name);

describe('request transactions that PostgreSQL rolls back for a conflict', () => {
  it('run again after a deadlock, and what the first attempt wrote is not kept', async () => {
    const [first, second] = [await newProject('First'), await newProject('Second')];
    const holder = new pg.Client({ connectionString: ownerUrl });
    await holder.connect();
    let attempts = 0;
    try {
      // The request's session finds the deadlock (1 s, the default) long before this one would.
      await holder.query(`set deadlock_timeout = '60s'`);
      await holder.query('begin');
      await holder.query(`update projects set description = 'held' where id = $1`, [first]);
      const request = inTenantTransaction(app.db, tenantId, { readOnly: false }, async (db) => {
        attempts += 1;
        await db.updateTable('projects').set({ name: sql`name || '+'` }).where('id', '=', second).execute();
        await db.updateTable('projects').set({ name: sql`name || '+'` }).where('id', '=', first).execute();
        return attempts;
      });
      await untilLockWaiters(ownerUrl, 1);
      // Now each waits for the other: PostgreSQL ends the request's transaction to break the cycle.
      await holder.query(`update projects set description = 'held' where id = $1`, [second]);
      await holder.query('commit');
      expect(await request).toBe(2);
    } finally {
      await holder.end();
    }
    expect(await namesOf(first, second)).toEqual(['First+', 'Second+']);
  });

  it('run again through a procedure: its whole call, input checked again, in a new transaction', async () => {
    const project = await newProject('Procedure');
    let attempts = 0;
    const router = t.router({
      rename: authedProcedure.input(z.object({ name: z.string() })).mutation(async ({ ctx, input }) => {
        attempts += 1;
        await ctx.db.updateTable('projects').set({ name: sql`name || ${input.name}` }).where('id', '=', project).execute();
        if (attempts === 1) await sql`do $$ begin raise exception 'deadlock detected' using errcode = 'deadlock_detected'; end $$`.execute(ctx.db);
        return attempts;
      }),
    });
    const principal = { userId: randomUUID(), tenantId, homeTenantId: tenantId, isPlatformAdmin: false, via: 'api_key' as const, apiKeyId: randomUUID() };
    const caller = t.createCallerFactory(router)({ db: app.db, auth: { kind: 'authenticated', principal }, requestId: 'test' } as unknown as Context);
    expect(await caller.rename({ name: '!' })).toBe(2);
    expect(await namesOf(project)).toEqual(['Procedure!']);
  });

  it('answer SERVICE_UNAVAILABLE when conflicts outlast three attempts, having changed nothing', async () => {
    const project = await newProject('Untouched');
    let attempts = 0;
    const failure = await withTenant(app.db, tenantId, async (trx) => {
      attempts += 1;
      await trx.updateTable('projects').set({ name: 'Changed' }).where('id', '=', project).execute();
      await sql`do $$ begin raise exception 'could not serialize access' using errcode = 'serialization_failure'; end $$`.execute(trx);
    }).catch((error: unknown) => error);
    expect(attempts).toBe(3);
    expect(failure).toMatchObject({ code: '40001' });
    expect(toWireError(failure)).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'The request kept colliding with concurrent ones and changed nothing; try again shortly' });
    expect(await namesOf(project)).toEqual(['Untouched']);
  });

  it('are the only failures run again', async () => {
    const project = await newProject('Once');
    let attempts = 0;
    const failure = await inTenantTransaction(app.db, tenantId, { readOnly: false }, async (db) => {
      attempts += 1;
      await db.updateTable('projects').set({ name: 'Twice' }).where('id', '=', project).execute();
      await sql`do $$ begin raise exception 'refused' using errcode = 'check_violation'; end $$`.execute(db);
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: '23514' });
    expect(attempts).toBe(1);
    expect(await namesOf(project)).toEqual(['Once']);
  });
});
