import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listeningUrl, startMainProcess, type MainProcess } from '../helpers/main-process.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { startDatabaseRelay } from '../helpers/database-relay.ts';

const running: MainProcess[] = [];
afterAll(() => running.forEach((main) => main.child.kill('SIGKILL')));

describe('SIGTERM while PostgreSQL does not answer', () => {
  it('ends the process soon after the grace period, saying what did not close', async () => {
    const database = await createTestDatabase();
    const relay = await startDatabaseRelay(new URL(database.ownerUrl));
    try {
      const graceMs = 500;
      const dataDir = await scratchDir('frozen');
      const api = startMainProcess('api', {
        DATABASE_URL: relay.urlFor(database.ownerUrl),
        APP_DATABASE_URL: relay.urlFor(database.appUrl),
        SERVER_SECRET: TEST_SERVER_SECRET,
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        SHUTDOWN_GRACE_MS: String(graceMs),
      });
      running.push(api);
      const url = await listeningUrl(api);
      const apiKey: string = JSON.parse(await readFile(join(dataDir, 'bootstrap.json'), 'utf8')).apiKey;

      relay.freeze();
      const inFlight = fetch(`${url}/api/me`, { headers: { 'x-api-key': apiKey } }).then(
        (response) => response.status,
        () => 'cut',
      );
      await relay.stalledQuery;

      const signalledAt = Date.now();
      api.child.kill('SIGTERM');
      const code = await Promise.race([api.exit, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), graceMs + 15_000))]);
      const elapsed = Date.now() - signalledAt;
      expect(code, api.output()).toBe(1);
      // Grace, then a few seconds to close connections: bounded, not forever.
      expect(elapsed).toBeLessThan(graceMs + 10_000);
      expect(await inFlight).toBe('cut');
      const errorLines = api.output().split('\n').filter((line) => /"level":50/.test(line));
      expect(errorLines, api.output()).toHaveLength(1);
      expect(errorLines[0]).toMatch(/shutdown did not finish within [\d.]+ s; not closed: the API database connections \(\d+ of \d+ still in use\), the owner database connections/);
    } finally {
      relay.close();
    }
  }, 60_000);
});
