import { mkdtemp, rm } from 'node:fs/promises';
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
    await rm(dataDir, { recursive: true, force: true });
  };
}


