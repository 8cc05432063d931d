import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { listeningUrl, mainProcessesStoppedAfterAll, untilOutput } from '../helpers/main-process.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

const startMain = mainProcessesStoppedAfterAll();

describe('npm start (control-plane/main.ts all) on the embedded database', () => {
  it('boots PostgreSQL, creates the first-run tenant once, serves API and worker, and stops cleanly on SIGTERM', async () => {
    const dataDir = await scratchDir('main');
    // Any free port, the one each start binds read from its log: a port found free beforehand may be taken by then.
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' };

    const first = startMain('all', env);
    const url = await listeningUrl(first);
    const bootstrapFile = join(dataDir, 'bootstrap.json');
    // The output names the file that holds the owner's key, and never the key: output is often collected as a log.
    const announced = first
      .output()
      .split('\n')
      .filter((line) => line.includes('first run'));
    expect(announced.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 40, bootstrapFile, msg: expect.stringContaining(`the owner's API key is in ${bootstrapFile} (mode 0600)`) }),
    ]);
    expect((await stat(bootstrapFile)).mode & 0o777).toBe(0o600);
    const bootstrap = JSON.parse(await readFile(bootstrapFile, 'utf8'));
    expect(bootstrap).toEqual({ tenantId: expect.any(String), organizationId: expect.any(String), userId: expect.any(String), apiKey: expect.stringMatching(/^swk_/) });
    const ownerKey: string = bootstrap.apiKey;
    expect(first.output()).not.toContain(ownerKey);

    const health = await call(url, '/api/health');
    expect(health.body.data).toMatchObject({ status: 'ok', database: { status: 'up' }, worker: { status: 'up' } });
    const me = await call(url, '/api/me', { apiKey: ownerKey });
    expect(me.body.data).toMatchObject({ tenantId: bootstrap.tenantId, isPlatformAdmin: true });

    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);
    expect(first.output()).toMatch(/worker stopped/);
    await expect(fetch(`${url}/api/health`)).rejects.toThrow();

    const second = startMain('all', env);
    const secondUrl = await listeningUrl(second);
    expect(second.output()).not.toMatch(/first run|owner's API key/);
    expect(JSON.parse(await readFile(bootstrapFile, 'utf8'))).toEqual(bootstrap);
    expect((await call(secondUrl, '/api/me', { apiKey: ownerKey })).status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe(0);
  }, 120_000);
});

describe('control-plane/main.ts worker against DATABASE_URL', () => {
  it('runs the worker alone and releases everything on SIGTERM', async () => {
    const database = await createTestDatabase();
    const dataDir = await scratchDir('worker');
    const worker = startMain('worker', { DATABASE_URL: database.ownerUrl, APP_DATABASE_URL: database.appUrl, DATA_DIR: dataDir });
    await untilOutput(worker, /worker started/);
    expect(worker.output()).not.toMatch(/API listening/);
    expect(await ownerQuery(database.ownerUrl, 'select worker_id from worker_heartbeats')).toHaveLength(1);
    worker.child.kill('SIGTERM');
    expect(await worker.exit, worker.output()).toBe(0);
    expect(await ownerQuery(database.ownerUrl, 'select worker_id from worker_heartbeats')).toHaveLength(0);
    expect(await countRows(database.ownerUrl, "pg_stat_activity where datname = $1 and application_name like 'specwright%'", [database.name])).toBe(0);
  }, 60_000);
});
