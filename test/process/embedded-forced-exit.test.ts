import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { listeningUrl, mainProcessesStoppedAfterAll, postmastersLeftRunning, postmastersOf, type MainProcess } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * A second SIGTERM exits at once; before, it stopped the embedded PostgreSQL only once that had
 * started, so an exit while it still started left it (or initdb) running after the service was gone.
 */
const startMainProcess = mainProcessesStoppedAfterAll();

/**
 * Pids of the initdb runs `main` started, building a cluster in `dataDir`
 * (`--pgdata=<dataDir>/postgres.initdb-<pid>/data`). Read from the process's own lists of children,
 * not the whole of /proc: a poll takes a moment even on a loaded machine, so initdb is stopped early
 * in its run. Stopped after it had finished its work (a poll that took longer than initdb), it would
 * have nothing left to remove.
 */
async function initdbsOf(main: MainProcess, dataDir: string): Promise<number[]> {
  const threads = await readdir(`/proc/${main.child.pid}/task`).catch(() => []);
  const lists = await Promise.all(threads.map((thread) => readFile(`/proc/${main.child.pid}/task/${thread}/children`, 'utf8').catch(() => '')));
  const pids = lists.flatMap((list) => list.split(' ').filter((pid) => /^\d+$/.test(pid)));
  const commandLines = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')));
  return pids.filter((_pid, index) => commandLines[index]!.split('\0').some((arg) => arg.startsWith(`--pgdata=${join(dataDir, 'postgres.initdb-')}`))).map(Number);
}

/** Waits for the first process `find` names, and stops it (SIGSTOP) so it gets no further until the test lets it. */
async function frozenOnceRunning(main: MainProcess, find: () => Promise<number[]>): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const [pid] = await find();
    if (pid !== undefined) {
      process.kill(pid, 'SIGSTOP');
      return pid;
    }
    if (main.child.exitCode !== null) throw new Error(`the start exited first:\n${main.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out:\n${main.output()}`);
    await sleep(2);
  }
}

/** SIGTERM (the start carries on: boot finishes first), then SIGTERM again a second later: exit now. */
async function terminatedTwice(main: MainProcess): Promise<number | null> {
  main.child.kill('SIGTERM');
  await sleep(1_200);
  expect(main.child.exitCode, main.output()).toBeNull();
  main.child.kill('SIGTERM');
  const code = await Promise.race([main.exit, sleep(10_000).then(() => 'still running' as const)]);
  if (code === 'still running') main.killNow();
  return code as number | null;
}

async function untilGone(pid: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (existsSync(`/proc/${pid}`) && Date.now() < deadline) await sleep(50);
}

async function nextStartServes(dataDir: string): Promise<void> {
  const next = startMainProcess('all', { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
  await listeningUrl(next);
  next.child.kill('SIGTERM');
  expect(await next.exit, next.output()).toBe(0);
}

describe('a second SIGTERM while the embedded PostgreSQL is still starting', () => {
  it('stops the postmaster that is not ready yet and gives DATA_DIR back; the next start works', async () => {
    const dataDir = await scratchDir('forced-exit-starting');
    const main = startMainProcess('all', { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
    let postmaster: number | undefined;
    try {
      // Held before it is ready, as a slow start (crash recovery, a slow disk) would be.
      postmaster = await frozenOnceRunning(main, () => postmastersOf(dataDir));
      const status = (await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[7];
      expect(status, 'the postmaster was ready before the test could hold it').not.toBe('ready');

      const code = await terminatedTwice(main);
      expect(code, main.output()).toBe(1);
      expect(main.output()).toMatch(/SIGTERM again: exiting without waiting for running work/);
      process.kill(postmaster, 'SIGCONT');
      // It carried on, served nobody, and held DATA_DIR.
      expect(await postmastersLeftRunning(dataDir)).toEqual([]);
      expect(existsSync(join(dataDir, 'postgres.owner'))).toBe(false);
    } finally {
      if (main.child.exitCode === null) main.killNow();
      if (postmaster !== undefined) process.kill(postmaster, 'SIGCONT');
      await postmastersLeftRunning(dataDir, 0);
    }
    await nextStartServes(dataDir);
  }, 120_000);

  it('stops initdb on a first start, which removes what it made; the next start builds the cluster', async () => {
    const dataDir = await scratchDir('forced-exit-initdb');
    const main = startMainProcess('all', { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
    let initdb: number | undefined;
    try {
      initdb = await frozenOnceRunning(main, () => initdbsOf(main, dataDir));
      const code = await terminatedTwice(main);
      expect(code, main.output()).toBe(1);
      process.kill(initdb, 'SIGCONT');
      await untilGone(initdb);
      // It went on to build a whole cluster no one would use, in a directory the next start removes under it.
      const workDirs = (await readdir(dataDir)).filter((entry) => entry.startsWith('postgres.initdb-'));
      expect(workDirs.filter((entry) => existsSync(join(dataDir, entry, 'data')))).toEqual([]);
      expect(await postmastersOf(dataDir)).toEqual([]);
    } finally {
      if (main.child.exitCode === null) main.killNow();
      if (initdb !== undefined && existsSync(`/proc/${initdb}`)) process.kill(initdb, 'SIGCONT');
      if (initdb !== undefined) await untilGone(initdb);
    }
    await nextStartServes(dataDir);
  }, 120_000);
});
