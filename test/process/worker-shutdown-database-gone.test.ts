import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { mainProcessesStoppedAfterAll, untilOutput } from '../helpers/main-process.ts';
import { countRows } from '../helpers/owner-sql.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { startDatabaseRelay, type DatabaseRelay } from '../helpers/database-relay.ts';

const startMainProcess = mainProcessesStoppedAfterAll();

const relays: DatabaseRelay[] = [];
afterAll(() => relays.forEach((relay) => relay.close()));

/** How often an idle graphile worker looks for a job (`pollInterval` in control-plane/jobs/worker.ts). */
const POLL_INTERVAL_MS = 1_000;

/**
 * Waits until the database has been sent a graphile worker's job lookup (its `get_job` query, the
 * one with `task_id = any($2::int[])`): the worker process then holds its task ids.
 */
async function untilJobLookupReached(ownerUrl: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const lookups = "pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query like '%task_id = any($2::int[])%'";
  while ((await countRows(ownerUrl, lookups)) === 0) {
    if (Date.now() > deadline) throw new Error(`no graphile worker job lookup reached the database within ${timeoutMs / 1000} s`);
    await sleep(25);
  }
}

describe('a worker stopped (SIGTERM) while its database is gone', () => {
  it('says so in JSON log lines only: no raw stack trace on stderr', async () => {
    const database = await createTestDatabase();
    const relay = await startDatabaseRelay(new URL(database.ownerUrl));
    relays.push(relay);
    const worker = startMainProcess('worker', { DATABASE_URL: relay.urlFor(database.ownerUrl), SERVER_SECRET: TEST_SERVER_SECRET, DATA_DIR: await scratchDir('worker-db-gone') });
    let stderr = '';
    worker.child.stderr!.on('data', (chunk) => (stderr += chunk));
    await untilOutput(worker, /Worker connected and looking for jobs/);
    // A worker exits with an error (the line under test) only when it is stopped during a job
    // lookup that then fails; stopped between two polls it exits cleanly and says nothing. Once the
    // database is gone, a lookup waits for a connection (the owner pool waits out a database that
    // is away, up to a minute), so every worker is in one from its next poll on: unless the
    // database went during the process's first lookup. graphile-worker cached the task ids that
    // first lookup reads, a failure included: every later lookup then failed at once, without a
    // connection, and the workers sat between polls (and never took a job again: patched since,
    // see test/jobs/worker-start-survives-a-lost-connection.test.ts). Closing the relay right after
    // "Worker connected" raced that first lookup: the run that logged no "Worker exited with
    // error" was that race. So the database goes only once a lookup has reached it.
    await untilJobLookupReached(database.ownerUrl);

    relay.close();
    // The process saw the database go (its LISTEN connection was cut). From then on each worker
    // is in a lookup waiting for a connection within one poll interval; they wait a minute. A wait
    // in between cannot be observed from outside (a refused connection leaves no trace and the
    // waiting logs nothing), so SIGTERM comes several poll intervals later, well inside that minute.
    await untilOutput(worker, /Error with notify listener/, 30_000);
    await sleep(5 * POLL_INTERVAL_MS);
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
