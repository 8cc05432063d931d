import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { FileMigrationProvider, Migrator } from 'kysely/migration';
import { Logger, runMigrations as runWorkerMigrations } from 'graphile-worker';
import type pg from 'pg';

const migrationFolder = fileURLToPath(new URL('../../migrations', import.meta.url));

/**
 * Brings a database to the current schema: graphile-worker's own schema first (our functions
 * call into it), then ours. Runs as the owner role; safe to call on every boot.
 */
export async function migrateToLatest(owner: Kysely<any>, ownerPool: pg.Pool): Promise<void> {
  await runWorkerMigrations({ pgPool: ownerPool, logger: new Logger(() => () => {}) });
  const migrator = new Migrator({
    db: owner,
    provider: new FileMigrationProvider({ fs, path, migrationFolder }),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error || failed) {
    const name = failed ? ` (${failed.migrationName})` : '';
    throw new Error(`Database migration failed${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
