import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { mainProcessesStoppedAfterAll, untilOutput } from '../helpers/main-process.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { startDatabaseRelay, type DatabaseRelay } from '../helpers/database-relay.ts';

const startMainProcess = mainProcessesStoppedAfterAll();

const relays: DatabaseRelay[] = [];
afterAll(() => relays.forEach((relay) => relay.close()));

describe('a worker stopped (SIGTERM) while its database is gone', () => {
  it('says so in JSON log lines only: no raw stack trace on stderr', async () => {
    const database = await createTestDatabase();
    const relay = await startDatabaseRelay(new URL(database.ownerUrl));
    relays.push(relay);
    const worker = startMainProcess('worker', { DATABASE_URL: relay.urlFor(database.ownerUrl), SERVER_SECRET: TEST_SERVER_SECRET, DATA_DIR: await scratchDir('worker-db-gone') });
    let stderr = '';
    worker.child.stderr!.on('data', (chunk) => (stderr += chunk));
    await untilOutput(worker, /Worker connected and looking for jobs/);

    relay.close();
    // The worker looks for a job every second: by now it waits for a connection the database will not
    // give. (2.5 s was too short once in a loaded full run: no worker was waiting yet, so none
    // exited with an error to log.)
    await sleep(5_000);
    worker.child.kill('SIGTERM');
    const code = await worker.exit;

    expect(code, worker.output()).toBe(0);
    // graphile-worker printed each worker's exit error with console.trace: a raw stack trace on stderr.
    expect(stderr, worker.output()).toBe('');
    const lines = worker.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
    const exits = lines.filter((line) => /^Worker exited with error/.test(line.msg));
    expect(exits.length, worker.output()).toBeGreaterThan(0);
    for (const line of exits) expect(line).toMatchObject({ level: 40, component: 'worker', err: { message: expect.stringMatching(/ECONNREFUSED/) } });
    // graphile-worker logs each worker's exit from its own promise handlers, which may run after the
    // runner has stopped: the order of the last lines is not fixed, that the stop was logged is.
    expect(lines.filter((line) => line.msg === 'worker stopped'), worker.output()).toHaveLength(1);
  }, 60_000);
});
