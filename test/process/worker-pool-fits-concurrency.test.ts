import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { mainProcessesStoppedAfterAll, untilOutput } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

/**
 * The worker's connections held 4 whatever WORKER_CONCURRENCY said, so a worker running more jobs
 * than that made them wait for connections, and graphile-worker warned at every start about a pool
 * size no variable sets.
 */
const startMainProcess = mainProcessesStoppedAfterAll();

describe('WORKER_CONCURRENCY above the default', () => {
  it('starts the worker with a connection for each job it may run, and no warning about its pool', async () => {
    const database = await createTestDatabase();
    const main = startMainProcess('worker', { DATABASE_URL: database.ownerUrl, DATA_DIR: await scratchDir('worker-pool'), SERVER_SECRET: TEST_SERVER_SECRET, WORKER_CONCURRENCY: '8' });
    await untilOutput(main, /Worker connected and looking for jobs/);
    await sleep(200);
    main.child.kill('SIGTERM');
    expect(await main.exit).toBe(0);
    const warnings = main.output().split('\n').filter((line) => /"level":(40|50|60)/.test(line) && !line.includes('first run: created'));
    expect(warnings).toEqual([]);
  }, 30_000);
});
