import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, loadConfig } from '../../control-plane/config.ts';
import { startService } from '../../control-plane/service.ts';
import { withDatabase } from '../helpers/database-url.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * DATABASE_URL naming an owner that may not create or alter roles (a managed database's usual
 * application owner): the README's path is to create specwright_app yourself and set APP_DATABASE_URL.
 */
const { ownerUrl: clusterOwnerUrl, appUrl } = inject('postgres');
const name = `limited_${randomBytes(4).toString('hex')}`;
const password = randomBytes(12).toString('hex');
let limitedOwnerUrl: string;
let dataDir: string;

beforeAll(async () => {
  await ownerQuery(clusterOwnerUrl, `create role ${name} login password '${password}' nocreaterole nocreatedb nosuperuser`);
  await ownerQuery(clusterOwnerUrl, `create database ${name} owner ${name}`);
  const url = new URL(withDatabase(clusterOwnerUrl, name));
  url.username = name;
  url.password = password;
  limitedOwnerUrl = url.toString();
  dataDir = await scratchDir('external');
});
afterAll(async () => {
  await ownerQuery(clusterOwnerUrl, `drop database if exists ${name} with (force)`);
  await ownerQuery(clusterOwnerUrl, `drop owned by ${name} cascade`).catch(() => {});
  await ownerQuery(clusterOwnerUrl, `drop role if exists ${name}`);
});

const configFor = (extra: Record<string, string>) =>
  loadConfig({ DATABASE_URL: limitedOwnerUrl, SERVER_SECRET: TEST_SERVER_SECRET, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...extra });

describe('an owner that may not manage roles', () => {
  it('is told to create the app role and set APP_DATABASE_URL, instead of a bare permission error', async () => {
    const refused = await startService(configFor({}), { mode: 'api' }).then(() => null, (error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toMatch(/may not create or alter the role specwright_app .*set APP_DATABASE_URL/);
  });

  it('serves with APP_DATABASE_URL naming the role created beforehand', async () => {
    const service = await startService(configFor({ APP_DATABASE_URL: withDatabase(appUrl, name) }), { mode: 'api' });
    try {
      const health = await fetch(`${service.url}/api/health`);
      expect(health.status).toBe(200);
      // The refused start above had already run the first run: its key is in the data directory.
      const { apiKey } = JSON.parse(await readFile(join(dataDir, 'bootstrap.json'), 'utf8')) as { apiKey: string };
      const me = await fetch(`${service.url}/api/me`, { headers: { 'x-api-key': apiKey } });
      expect(me.status).toBe(200);
    } finally {
      await service.stop();
    }
  });
});
