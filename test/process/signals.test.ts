import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startMainProcess, untilOutput } from '../helpers/main-process.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

const BOOT_LOCK_KEY = 7_305_221_901;

describe('a second SIGTERM/SIGINT', () => {
  it('ends a process whose boot is stuck (here: waiting for the boot lock) at once, instead of never', async () => {
    const database = await createTestDatabase();
    const holder = new pg.Client({ connectionString: database.ownerUrl });
    await holder.connect();
    await holder.query('select pg_advisory_lock($1)', [BOOT_LOCK_KEY]);
    try {
      const { child, output, exit } = startMainProcess('worker', { DATABASE_URL: database.ownerUrl, DATA_DIR: await scratchDir('signal') });
      const waiting = async () => Number((await holder.query(`select count(*) from pg_locks where locktype = 'advisory' and not granted`)).rows[0].count);
      for (let tries = 0; (await waiting()) === 0; tries += 1) {
        if (tries > 200) throw new Error(`the worker never waited for the boot lock:\n${output()}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }

      child.kill('SIGTERM'); // the first waits for boot to finish, which here it cannot
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect(child.exitCode).toBeNull();
      child.kill('SIGTERM');
      const code = await Promise.race([exit, new Promise((resolve) => setTimeout(() => resolve('still running'), 5_000))]);
      if (code === 'still running') child.kill('SIGKILL');
      expect(code, output()).toBe(1);
      expect(output()).toMatch(/SIGTERM again/);
    } finally {
      await holder.end();
    }
  }, 30_000);
});

describe('Ctrl-C under `npm start` (SIGINT twice at once: from the terminal and forwarded by npm)', () => {
  it('is one request to stop: running work still finishes and the process exits cleanly', async () => {
    const database = await createTestDatabase();
    const worker = startMainProcess('worker', { DATABASE_URL: database.ownerUrl, DATA_DIR: await scratchDir('signal') });
    await untilOutput(worker, /worker started/);
    worker.child.kill('SIGINT');
    worker.child.kill('SIGINT');
    expect(await worker.exit, worker.output()).toBe(0);
    expect(worker.output()).toMatch(/worker stopped/);
  }, 30_000);
});

describe('Ctrl-C in the terminal of `npm start` (SIGINT to the whole process group)', () => {
  it('stops the service in order: the embedded PostgreSQL is not shut down under running work', async () => {
    const main = startMainProcess('all', { PORT: '0', DATA_DIR: await scratchDir('ctrl-c') }, { ownProcessGroup: true });
    await untilOutput(main, /API listening/);
    await untilOutput(main, /Worker connected/);
    process.kill(-main.child.pid!, 'SIGINT');
    const code = await Promise.race([main.exit, new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000))]);
    if (code === 'still running') process.kill(-main.child.pid!, 'SIGKILL');
    expect(code, main.output()).toBe(0);
    // PostgreSQL used to get the terminal's SIGINT too and cut the worker's connection first.
    expect(main.output().split('\n').filter((line) => line.includes('"level":50')), main.output()).toEqual([]);
    expect(main.output()).toMatch(/embedded PostgreSQL stopped|worker stopped/);
  }, 90_000);
});

describe('the embedded PostgreSQL dying under a running service', () => {
  it('stops the service with exit code 1 and says why, so a supervisor can start it again — which works', async () => {
    const dataDir = await scratchDir('pg-dies');
    const main = startMainProcess('all', { PORT: '0', DATA_DIR: dataDir }, { ownProcessGroup: true });
    await untilOutput(main, /API listening/);
    const postmasterPid = Number((await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(postmasterPid, 'SIGKILL');
    const code = await Promise.race([main.exit, new Promise((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
    if (code === 'still running') process.kill(-main.child.pid!, 'SIGKILL');
    expect(code, main.output()).toBe(1);
    expect(main.output()).toMatch(/the embedded PostgreSQL stopped unexpectedly \(killed by SIGKILL/);
    const again = startMainProcess('all', { PORT: '0', DATA_DIR: dataDir }, { ownProcessGroup: true });
    await untilOutput(again, /API listening/);
    process.kill(-again.child.pid!, 'SIGTERM');
    expect(await again.exit, again.output()).toBe(0);
  }, 120_000);
});

describe('a failure nothing handles (an unawaited promise that rejects)', () => {
  const rejectOnSignal = new URL('../helpers/reject-unhandled-on-signal.mjs', import.meta.url).href;

  it('is logged and shuts the service down in order with exit code 1, instead of killing it mid-request', async () => {
    const database = await createTestDatabase();
    const main = startMainProcess('worker', {
      DATABASE_URL: database.ownerUrl,
      DATA_DIR: await scratchDir('unhandled'),
      NODE_OPTIONS: `--import=${rejectOnSignal}`,
    });
    await untilOutput(main, /worker started/);
    main.child.kill('SIGUSR2');
    const code = await Promise.race([main.exit, new Promise((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
    if (code === 'still running') main.child.kill('SIGKILL');
    expect(code, main.output()).toBe(1);
    expect(main.output()).toMatch(/"msg":"a failure nothing handled"/);
    expect(main.output()).toMatch(/an unawaited call failed/);
    expect(main.output()).toMatch(/shutting down: no new requests or jobs/);
    expect(main.output()).toMatch(/worker stopped/);
  }, 60_000);

  it('a second one, while the first shutdown waits for a request in flight, does not cut that shutdown short', async () => {
    const database = await createTestDatabase();
    const main = startMainProcess('api', {
      DATABASE_URL: database.ownerUrl,
      APP_DATABASE_URL: database.appUrl,
      SERVER_SECRET: TEST_SERVER_SECRET,
      DATA_DIR: await scratchDir('unhandled'),
      PORT: '0',
      SHUTDOWN_GRACE_MS: '4000',
      NODE_OPTIONS: `--import=${rejectOnSignal}`,
    });
    await untilOutput(main, /API listening/);
    const port = Number(/"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(main.output())![1]);
    // A request whose body has not all arrived: shutdown waits for it, up to the grace period.
    const inFlight = connect(port, '127.0.0.1');
    inFlight.on('error', () => {});
    inFlight.write('POST /api/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na');
    await sleep(200);
    main.child.kill('SIGUSR2');
    await untilOutput(main, /shutting down: no new requests or jobs/);
    await sleep(1_500);
    main.child.kill('SIGUSR2');
    await untilOutput(main, /already shutting down/);
    expect(main.child.exitCode, main.output()).toBeNull();
    const code = await Promise.race([main.exit, new Promise((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
    if (code === 'still running') main.child.kill('SIGKILL');
    inFlight.destroy();
    expect(code, main.output()).toBe(1);
    expect(main.output()).not.toMatch(/again: exiting without waiting/);
  }, 60_000);
});
