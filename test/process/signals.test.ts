import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { listeningUrl, postmastersLeftRunning, startMainProcess, untilOutput, type MainProcess } from '../helpers/main-process.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
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
      const main = startMainProcess('worker', { DATABASE_URL: database.ownerUrl, DATA_DIR: await scratchDir('signal') });
      const waiting = async () => Number((await holder.query(`select count(*) from pg_locks where locktype = 'advisory' and not granted`)).rows[0].count);
      // 30 s: under a loaded full run a fresh node process took more than 5 s to reach the lock.
      const deadline = Date.now() + 30_000;
      while ((await waiting()) === 0) {
        if (Date.now() > deadline) throw new Error(`the worker never waited for the boot lock:\n${main.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }

      main.child.kill('SIGTERM'); // the first waits for boot to finish, which here it cannot
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect(main.child.exitCode).toBeNull();
      main.child.kill('SIGTERM');
      const code = await exitCodeWithin(main, 5_000);
      expect(code, main.output()).toBe(1);
      expect(main.output()).toMatch(/SIGTERM again/);
    } finally {
      await holder.end();
    }
  }, 60_000);
});

/** The process's log lines (JSON), skipping anything else it printed. */
function logLines(main: MainProcess): Array<Record<string, unknown>> {
  return main.output().split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/**
 * A request whose body has not all arrived: shutdown waits for it, up to the grace period. It asks
 * `Expect: 100-continue`, which Node's server answers the moment it has parsed the headers and
 * taken the request in: once that answer is back, a signal finds the request in flight (a signal
 * sent sooner found a connection with no request yet, closed at once as idle).
 */
async function halfSentRequest(url: string): Promise<Socket> {
  const inFlight = connect(Number(new URL(url).port), '127.0.0.1');
  inFlight.on('error', () => {});
  let received = '';
  await new Promise<void>((resolve, reject) => {
    const fail = (why: string) => () => reject(new Error(`${why}; the server answered: ${JSON.stringify(received)}`));
    const timer = setTimeout(fail('no 100 Continue within 10 s'), 10_000);
    inFlight.once('close', fail('the connection closed before the server took the request in'));
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (!/^HTTP\/1\.1 100 /.test(received)) return;
      clearTimeout(timer);
      inFlight.off('data', onData);
      resolve();
    };
    inFlight.on('data', onData);
    inFlight.write('POST /api/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n');
  });
  inFlight.write('{"na');
  return inFlight;
}

/** Sends `signal` once a request is in flight, and returns that request when shutdown, waiting for it, has begun. */
async function shutdownWaitingOnRequest(main: MainProcess, signal: NodeJS.Signals): Promise<Socket> {
  const inFlight = await halfSentRequest(await listeningUrl(main));
  main.child.kill(signal);
  await untilOutput(main, /shutting down: no new requests or jobs/);
  return inFlight;
}

/** Waits for the process to exit (up to `timeoutMs`); one still running then is killed and reported. */
async function exitCodeWithin(main: MainProcess, timeoutMs: number): Promise<number | null | 'still running'> {
  const code = await Promise.race([main.exit, sleep(timeoutMs).then(() => 'still running' as const)]);
  if (code === 'still running') main.killNow();
  return code;
}

describe('an exit that does not wait for shutdown, on the embedded database', () => {
  it('a second SIGTERM while shutdown waits for a request logs why it exits, exits 1, and stops the embedded PostgreSQL', async () => {
    const dataDir = await scratchDir('second-sigterm');
    const main = startMainProcess('api', { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, SHUTDOWN_GRACE_MS: '60000' }, { ownProcessGroup: true });
    try {
      const inFlight = await shutdownWaitingOnRequest(main, 'SIGTERM');
      await sleep(1_200);
      expect(main.child.exitCode, main.output()).toBeNull();
      main.child.kill('SIGTERM');
      const code = await exitCodeWithin(main, 10_000);
      inFlight.destroy();

      expect(code, main.output()).toBe(1);
      // A log line like every other (it was plain text on stderr).
      expect(logLines(main).filter((line) => /again/.test(String(line.msg)))).toEqual([
        expect.objectContaining({ level: 40, signal: 'SIGTERM', msg: 'SIGTERM again: exiting without waiting for running work' }),
      ]);
      // The postmaster ran on, holding DATA_DIR, until the next start stopped it.
      expect(await postmastersLeftRunning(dataDir)).toEqual([]);
      expect(existsSync(join(dataDir, 'postgres.owner'))).toBe(false);
    } finally {
      if (main.child.exitCode === null) main.killNow();
      await postmastersLeftRunning(dataDir, 0);
    }
  }, 90_000);

  it('a shutdown that times out (a request stuck on a lock) exits 1 and stops the embedded PostgreSQL too', async () => {
    const dataDir = await scratchDir('shutdown-timeout');
    const main = startMainProcess('api', { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, SHUTDOWN_GRACE_MS: '300' }, { ownProcessGroup: true });
    let holder: pg.Client | undefined;
    try {
      const url = await listeningUrl(main);
      const databasePort = Number(/"port":(\d+)[^\n]*embedded PostgreSQL started/.exec(main.output())![1]);
      const password = (await readFile(join(dataDir, 'postgres-password'), 'utf8')).trim();
      const ownerUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${databasePort}/specwright`;
      const apiKey: string = JSON.parse(await readFile(join(dataDir, 'bootstrap.json'), 'utf8')).apiKey;
      // Every authenticated request reads api_keys: with the table locked, it waits past any shutdown.
      holder = new pg.Client({ connectionString: ownerUrl });
      holder.on('error', () => {});
      await holder.connect();
      await holder.query('begin');
      await holder.query('lock table api_keys in access exclusive mode');
      const inFlight = fetch(`${url}/api/me`, { headers: { 'x-api-key': apiKey } }).then(() => 'answered', () => 'cut');
      await untilLockWaiters(ownerUrl);
      main.child.kill('SIGTERM');
      const code = await exitCodeWithin(main, 20_000);

      expect(code, main.output()).toBe(1);
      expect(main.output()).toMatch(/shutdown did not finish within [\d.]+ s; not closed: the API database connections/);
      expect(await inFlight).toBe('cut');
      expect(await postmastersLeftRunning(dataDir)).toEqual([]);
      expect(existsSync(join(dataDir, 'postgres.owner'))).toBe(false);
    } finally {
      await holder?.end().catch(() => {});
      if (main.child.exitCode === null) main.killNow();
      await postmastersLeftRunning(dataDir, 0);
    }
  }, 90_000);
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
    const code = await exitCodeWithin(main, 20_000);
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
    const code = await exitCodeWithin(main, 30_000);
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
    const code = await exitCodeWithin(main, 30_000);
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
    const inFlight = await shutdownWaitingOnRequest(main, 'SIGUSR2');
    await sleep(1_500);
    main.child.kill('SIGUSR2');
    await untilOutput(main, /already shutting down/);
    expect(main.child.exitCode, main.output()).toBeNull();
    const code = await exitCodeWithin(main, 30_000);
    inFlight.destroy();
    expect(code, main.output()).toBe(1);
    expect(main.output()).not.toMatch(/again: exiting without waiting/);
  }, 60_000);
});
