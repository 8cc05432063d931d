import { chmod, mkdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveServerSecret } from '../../control-plane/bootstrap/server-secret.ts';
import { loadConfig } from '../../control-plane/config.ts';
import { migratorFor } from '../../control-plane/db/migrate.ts';
import { startService, type RunningService } from '../../control-plane/service.ts';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery, withOwnerKysely } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

const started: RunningService[] = [];
afterAll(() => Promise.all(started.map((service) => service.stop())));

async function startApi(database: TestDatabase, dataDir: string): Promise<RunningService> {
  const config = loadConfig({ DATABASE_URL: database.ownerUrl, APP_DATABASE_URL: database.appUrl, DATA_DIR: dataDir, SERVER_SECRET: TEST_SERVER_SECRET, PORT: '0', HOST: '127.0.0.1' });
  const service = await startService(config, { mode: 'api', logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  started.push(service);
  return service;
}

describe('migrations at boot', () => {
  it('says which migrations it is applying before it applies them, and applies each once', async () => {
    const database = await createTestDatabase();
    // A database one migration behind: the newest one taken back by its own `down`.
    const newest = await withOwnerKysely(database.ownerUrl, async (owner) => {
      const migrator = migratorFor(owner);
      const name = (await migrator.getMigrations()).at(-1)!.name;
      expect((await migrator.migrateDown()).error).toBeUndefined();
      return name;
    });
    const lines: Array<{ msg?: string; migrations?: string[] }> = [];
    const logDestination = new Writable({ write: (chunk, _encoding, done) => { lines.push(...String(chunk).split('\n').filter(Boolean).map((line) => JSON.parse(line))); done(); } });
    const config = loadConfig({ DATABASE_URL: database.ownerUrl, APP_DATABASE_URL: database.appUrl, DATA_DIR: await scratchDir('migrate'), SERVER_SECRET: TEST_SERVER_SECRET, PORT: '0', HOST: '127.0.0.1' });
    started.push(await startService(config, { mode: 'api', logDestination }));
    const announced = lines.filter((line) => line.msg?.startsWith('applying database migrations'));
    expect(announced.map((line) => line.migrations)).toEqual([[newest]]);
    expect(await countRows(database.ownerUrl, 'kysely_migration where name = $1', [newest])).toBe(1);
  });
});

describe('bootstrap.json', () => {
  it('a first run that cannot save the owner key creates no tenant, so the next start creates one and saves its key', async () => {
    const database = await createTestDatabase();
    const dataDir = await scratchDir('first-run');
    await mkdir(join(dataDir, 'bootstrap.json')); // unwritable as a file

    await expect(startApi(database, dataDir)).rejects.toThrow();
    expect(await ownerQuery(database.ownerUrl, 'select id from tenants')).toEqual([]);

    await rmdir(join(dataDir, 'bootstrap.json'));
    const service = await startApi(database, dataDir);
    expect(service.firstRun.created).toBe(true);
    const saved = JSON.parse(await readFile(join(dataDir, 'bootstrap.json'), 'utf8'));
    expect((await call(service.url!, '/api/me', { apiKey: saved.apiKey })).body.data).toMatchObject({ tenantId: saved.tenantId, isPlatformAdmin: true });
  });

  it('replaces a file left with loose permissions instead of writing the key into it', async () => {
    const database = await createTestDatabase();
    const dataDir = await scratchDir('first-run');
    await writeFile(join(dataDir, 'bootstrap.json'), '{}\n');
    await chmod(join(dataDir, 'bootstrap.json'), 0o644);

    const service = await startApi(database, dataDir);
    expect(service.firstRun.created).toBe(true);
    expect((await stat(join(dataDir, 'bootstrap.json'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(dataDir, 'bootstrap.json'), 'utf8')).apiKey).toBe(service.firstRun.bootstrap!.apiKey);
  });
});

describe('the server secret kept in DATA_DIR', () => {
  it('an empty file (a crash between creating and writing it) is replaced, never used as an empty key', async () => {
    const dataDir = await scratchDir('secret');
    await writeFile(join(dataDir, 'server-secret'), '', { mode: 0o600 });
    const { secret } = await resolveServerSecret(undefined, dataDir);
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(await resolveServerSecret(undefined, dataDir)).toEqual({ secret, source: 'data-dir' });
  });

  it('processes creating it at the same moment all read the one that was kept, never a half-written file', async () => {
    for (let round = 0; round < 5; round += 1) {
      const dataDir = await scratchDir('secret');
      const secrets = await Promise.all(Array.from({ length: 8 }, () => resolveServerSecret(undefined, dataDir)));
      const kept = (await readFile(join(dataDir, 'server-secret'), 'utf8')).trim();
      expect(kept.length).toBeGreaterThanOrEqual(32);
      expect(secrets.map((result) => result.secret)).toEqual(Array(8).fill(kept));
      expect((await stat(join(dataDir, 'server-secret'))).mode & 0o777).toBe(0o600);
    }
  });

  it('a damaged file is refused with a message naming it', async () => {
    const dataDir = await scratchDir('secret');
    await writeFile(join(dataDir, 'server-secret'), 'short\n', { mode: 0o600 });
    await expect(resolveServerSecret(undefined, dataDir)).rejects.toThrow(/server-secret.*at least 32 characters/);
  });
});
