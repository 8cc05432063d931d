import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
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
  await runWorkerMigrations({ pgPool: ownerPool, logger: new Logger(() => () => {}) });
  const migrator = migratorFor(owner);
  const pending = (await migrator.getMigrations()).filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
  if (pending.length > 0) onPending?.(pending);
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error || failed) {
    const name = failed ? ` (${failed.migrationName})` : '';
    throw new Error(`Database migration failed${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
