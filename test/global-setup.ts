import { chmod, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { appRoleUrl, enableAppRoleLogin, ensureAppRoleExists } from '../control-plane/db/app-role.ts';
import { startEmbeddedPostgres } from '../control-plane/db/embedded-postgres.ts';
import { createDatabase } from '../control-plane/db/kysely-client.ts';
import { migrateToLatest } from '../control-plane/db/migrate.ts';
import { withDatabase } from './helpers/database-url.ts';
import { TEMPLATE_DATABASE, TEST_SERVER_SECRET } from './helpers/test-constants.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: { ownerUrl: string; appUrl: string };
  }
}

/**
 * One real PostgreSQL for the whole run, with a migrated template database. Each test file
 * clones the template (CREATE DATABASE … TEMPLATE), so files run in parallel on their own data.
 */
export default async function setup(project: TestProject) {
  const dataDir = await mkdtemp(join(tmpdir(), 'specwright-test-'));
  const scratch = await useRunTempDirectory(dataDir);
  const cluster = await startEmbeddedPostgres(dataDir, 'postgres');
  const templateUrl = withDatabase(cluster.ownerUrl, TEMPLATE_DATABASE);

  const admin = createDatabase(cluster.ownerUrl, { max: 1 });
  await admin.pool.query(`drop database if exists "${TEMPLATE_DATABASE}"`);
  await admin.pool.query(`create database "${TEMPLATE_DATABASE}"`);
  await ensureAppRoleExists(admin.db);
  const appPassword = await enableAppRoleLogin(admin.db, TEST_SERVER_SECRET);
  await admin.db.destroy();

  const template = createDatabase(templateUrl, { max: 2 });
  await migrateToLatest(template.db, template.pool);
  await template.db.destroy();

  project.provide('postgres', { ownerUrl: cluster.ownerUrl, appUrl: appRoleUrl(cluster.ownerUrl, appPassword) });
  return async () => {
    await cluster.stop();
    const leftovers = await readdir(scratch);
    await rm(dataDir, { recursive: true, force: true });
    if (leftovers.length > 0) {
      throw new Error(`The tests left ${leftovers.join(', ')} in the temp directory: remove what a test makes (test/helpers/scratch-dir.ts)`);
    }
  };
}

/**
 * Points the run's temp directory (TMPDIR, inherited by the test files' processes and whatever
 * they start) at a directory of the run's own, so the run can tell what its tests left behind:
 * each embedded cluster a test starts is tens of MB, and a suite that leaves them fills the disk.
 */
async function useRunTempDirectory(runDir: string): Promise<string> {
  const scratch = join(runDir, 'tmp');
  await mkdir(scratch);
  // Clusters started inside run as the `postgres` OS user when the tests run as root: it must reach them.
  await chmod(runDir, 0o755);
  await chmod(scratch, 0o755);
  // Node's compile cache (vitest turns it on in its workers) is no test's doing: it stays where it was.
  process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'node-compile-cache');
  process.env.TMPDIR = scratch;
  return scratch;
}


