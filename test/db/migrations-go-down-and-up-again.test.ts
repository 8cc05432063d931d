import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { MigrationResultSet, Migrator } from 'kysely/migration';
import { createDatabase, type DatabaseHandle } from '../../control-plane/db/kysely-client.ts';
import { migrateToLatest, migratorFor } from '../../control-plane/db/migrate.ts';
import { withDatabase } from '../helpers/database-url.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { describeCatalog } from '../helpers/schema-catalog.ts';
import { describeSchema } from '../helpers/schema-snapshot.ts';

/**
 * Every migration ships a `down`, and an operator rolling back would be the first to run it, at the
 * worst time. Here each one runs: on an empty database of this file's own (not the migrated
 * template), migrated to the latest as the service boots, then down one migration at a time to
 * none, then up one at a time to the latest again. At every level the schema must be the same going
 * up as it was coming down, which names a `down` that leaves something of its `up` behind or takes
 * too much; nothing of ours may be left with none applied; and the schema at the end must be the
 * one at the start, and the committed snapshot.
 */

const SNAPSHOT = 'migrations/schema.snapshot.txt';
const APP_ROLE = 'specwright_app';
/** Kysely's bookkeeping: made by the migrator, not by a migration, it stays when every migration is down. */
const MIGRATOR_TABLES = ['kysely_migration', 'kysely_migration_lock'];

const { ownerUrl: clusterOwnerUrl } = inject('postgres');
const name = `migrations_round_trip_${randomBytes(6).toString('hex')}`;
const url = withDatabase(clusterOwnerUrl, name);
let owner: DatabaseHandle;
let client: pg.Client;

beforeAll(async () => {
  // Empty: template0 holds nothing of anyone's, and nothing connects to it to hold it up. The app
  // role is the cluster's, made before any migration runs (global setup, as a boot does it).
  await ownerQuery(clusterOwnerUrl, `create database "${name}" template template0`);
  owner = createDatabase(url, { max: 2 });
  client = new pg.Client({ connectionString: url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await owner?.db.destroy();
  await ownerQuery(clusterOwnerUrl, `drop database if exists "${name}" with (force)`);
});

/** The names of the migrations applied, oldest first. */
async function applied(migrator: Migrator): Promise<string[]> {
  return (await migrator.getMigrations()).filter((migration) => migration.executedAt !== undefined).map((migration) => migration.name);
}

/** Fails naming the migration whose step failed, with PostgreSQL's error. */
function expectStep(step: MigrationResultSet, expected: string, direction: 'Up' | 'Down', hint = ''): void {
  const why = step.error instanceof Error ? step.error.message : String(step.error);
  expect(step.error, `${expected}'s ${direction.toLowerCase()} failed: ${why}${hint}`).toBeUndefined();
  expect(step.results?.map((result) => [result.migrationName, result.direction, result.status])).toEqual([[expected, direction, 'Success']]);
}

/** What of ours is in the database: nothing at all, once every migration is down. */
async function ours(): Promise<Record<string, string[]>> {
  const list = async (text: string, values: unknown[] = []) => (await client.query({ text, values, rowMode: 'array' })).rows.map((row: unknown[]) => row.join(' '));
  return {
    relations: await list(
      `select n.nspname || '.' || c.relname || ' (' || c.relkind::text || ')' from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname in ('public', 'app_private')
          and not (n.nspname = 'public' and (c.relname = any($1) or c.oid in (select indexrelid from pg_index where indrelid::regclass::text = any($1))))
        order by 1`,
      [MIGRATOR_TABLES],
    ),
    functions: await list(`select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname in ('public', 'app_private') order by 1`),
    types: await list(
      `select n.nspname || '.' || t.typname from pg_type t join pg_namespace n on n.oid = t.typnamespace
        where n.nspname in ('public', 'app_private') and ltrim(t.typname, '_') <> all($1) order by 1`,
      [MIGRATOR_TABLES],
    ),
    schemas: await list(`select nspname from pg_namespace where nspname = 'app_private'`),
    policies: await list(`select schemaname || '.' || tablename || ' ' || policyname from pg_policies where schemaname in ('public', 'app_private') order by 1`),
    // Whatever in this database still names the app role: its privileges (on schemas, tables,
    // columns, functions, and by default), policies for it, anything it owns. The role itself is
    // the cluster's, and stays: other databases may use it, and no migration made it.
    [`naming ${APP_ROLE}`]: await list(
      `select pg_describe_object(classid, objid, objsubid) || ' (' || deptype::text || ')' from pg_shdepend
        where dbid = (select oid from pg_database where datname = current_database()) and refobjid = $1::regrole order by 1`,
      [APP_ROLE],
    ),
  };
}

describe('every migration', () => {
  it('goes down, one at a time, to nothing of ours, and up again to the same schema', { timeout: 60_000 }, async () => {
    const committed = await readFile(SNAPSHOT, 'utf8');
    const nothingOfOurs = { relations: [], functions: [], types: [], schemas: [], policies: [], [`naming ${APP_ROLE}`]: [] };
    expect(await ours(), 'the new database is not empty').toEqual(nothingOfOurs);

    // As the service boots: graphile-worker's schema, then all of ours in one go.
    await migrateToLatest(owner.db, owner.pool);
    const migrator = migratorFor(owner.db);
    const names = await applied(migrator);
    expect(names.length).toBeGreaterThan(0);
    const snapshot = await describeSchema(url);
    expect.soft(snapshot, `the migrated schema differs from ${SNAPSHOT}`).toBe(committed);

    // Down, one migration at a time; each must succeed. Each level, as it looks coming down:
    const comingDown: string[] = [];
    comingDown[names.length] = await describeCatalog(client);
    for (let level = names.length; level > 0; level -= 1) {
      expectStep(await migrator.migrateDown(), names[level - 1]!, 'Down');
      comingDown[level - 1] = await describeCatalog(client);
    }
    expect(await applied(migrator)).toEqual([]);
    expect.soft(await ours(), 'left behind with every migration down').toEqual(nothingOfOurs);

    // Up again, one at a time; each must succeed. An `up` that fails here, having run on a new
    // database, meets something a `down` left behind. Each level, as it looks going up:
    const goingUp: string[] = [comingDown[0]!];
    for (let level = 1; level <= names.length; level += 1) {
      expectStep(await migrator.migrateUp(), names[level - 1]!, 'Up', ' (did a down leave behind what it makes?)');
      goingUp[level] = await describeCatalog(client);
    }

    // Each level looks the same both ways. Looked at from the top, the first level that does not
    // is the one that the down of the migration just above it came down to: that down is wrong.
    // (Level 0, where the way up starts, is held to nothing of ours above.)
    for (let level = names.length; level >= 1; level -= 1) {
      const wrong = level === names.length ? 'an up makes something else after the downs' : `${names[level]}'s down does not undo its up`;
      expect(goingUp[level], `with ${names[level - 1]} last applied, the schema going up differs from the schema coming down: ${wrong}`).toBe(comingDown[level]);
    }
    expect(await describeSchema(url), 'the schema after the round trip differs from the schema before it').toBe(snapshot);
  });
});
