import { describe, expect, it } from 'vitest';
import { listeningUrl, mainProcessesStoppedAfterAll } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

/** The URL the start logs is one an operator can paste: it said `http://::1:3000`, which is no URL. */
const startMainProcess = mainProcessesStoppedAfterAll();

describe('a HOST that is an IPv6 address', () => {
  it.each([['::1', 'http://[::1]:'], ['::', 'http://[::1]:']])('HOST=%s logs a URL that reaches the API', async (host, prefix) => {
    const database = await createTestDatabase();
    const main = startMainProcess('api', { DATABASE_URL: database.ownerUrl, DATA_DIR: await scratchDir('ipv6-host'), PORT: '0', HOST: host, SERVER_SECRET: TEST_SERVER_SECRET });
    const url = await listeningUrl(main);
    expect(url.startsWith(prefix)).toBe(true);
    const health = await fetch(`${url}/api/health`);
    expect(health.status).toBe(200);
    main.child.kill('SIGTERM');
    expect(await main.exit).toBe(0);
  }, 30_000);
});
