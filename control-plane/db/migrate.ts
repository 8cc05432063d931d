import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { FileMigrationProvider, Migrator } from 'kysely/migration';
import { Logger, runMigrations as runWorkerMigrations } from 'graphile-worker';
import type pg from 'pg';

const migrationFolder = fileURLToPath(new URL('../../migrations', import.meta.url));

/** Kysely's migrator over the files in `migrations/`, run as the owner role. */
export function migratorFor(owner: Kysely<any>): Migrator {
  return new Migrator({ db: owner, provider: new FileMigrationProvider({ fs, path, migrationFolder }) });
}

/**
 * Brings a database to the current schema: graphile-worker's own schema first (our functions
 * call into it), then ours. Runs as the owner role; safe to call on every boot. `onPending` hears
 * which of ours are about to run (a migration over a large table can hold the boot for a while).
 */
export async function migrateToLatest(owner: Kysely<any>, ownerPool: pg.Pool, onPending?: (migrationNames: string[]) => void): Promise<void> {
  const migrator = migratorFor(owner);
  const known = await migrator.getMigrations();
  await refuseNewerSchema(owner, new Set(known.map((migration) => migration.name)));
  await runWorkerMigrations({ pgPool: ownerPool, logger: new Logger(() => () => {}) });
  const pending = known.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
  if (pending.length > 0) onPending?.(pending);
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error || failed) {
    const name = failed ? ` (${failed.migrationName})` : '';
    throw new Error(`Database migration failed${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * A database a newer version migrated (an upgrade rolled back, an old node left running) holds
 * migrations this version has no file for. Kysely refuses it as "corrupted migrations", which sends
 * an operator looking for damage: say what it is, before anything is applied.
 */
async function refuseNewerSchema(owner: Kysely<any>, known: Set<string>): Promise<void> {
  const { rows } = await sql<{ present: boolean }>`select to_regclass('kysely_migration') is not null as present`.execute(owner);
  if (!rows[0]?.present) return;
  const applied = await owner.selectFrom('kysely_migration').select('name').orderBy('name').execute();
  const unknown = applied.map((row) => row.name as string).filter((name) => !known.has(name));
  if (unknown.length === 0) return;
  throw new Error(
    `the database was migrated by a newer version of Specwright (it has migrations this version does not know: ${unknown.join(', ')}); ` +
      'start that version or a later one, or restore a backup made before it ran. No migration was applied.',
  );
}
