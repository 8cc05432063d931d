import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve as resolvePath } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll } from 'vitest';

/** `control-plane/main.ts` running in a child process, with everything it printed so far. */
export interface MainProcess {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
  /** SIGKILL to the process, or to its whole process group when it has one of its own. */
  killNow: () => void;
}

/**
 * Starts `node control-plane/main.ts <mode>` as `npm start` would, with `env` over this process's
 * environment (minus DATABASE_URL unless given: the embedded database is the default).
 */
export function startMainProcess(mode: 'all' | 'api' | 'worker', env: Record<string, string>, options: { ownProcessGroup?: boolean } = {}): MainProcess {
  const inherited = { ...process.env };
  delete inherited.DATABASE_URL;
  const child = spawn(process.execPath, ['--no-node-snapshot', 'control-plane/main.ts', mode], {
    env: { ...inherited, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, as a terminal gives a foreground job: `process.kill(-pid)` is Ctrl-C.
    detached: options.ownProcessGroup === true,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const killNow = () => (options.ownProcessGroup ? process.kill(-child.pid!, 'SIGKILL') : child.kill('SIGKILL'));
  return { child, output: () => output, exit, killNow };
}

/** Waits until the process printed `pattern`; fails with its output if it exits or time runs out. */
export async function untilOutput(main: MainProcess, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(main.output())) {
    if (main.child.exitCode !== null) throw new Error(`the process exited before printing ${pattern}:\n${main.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; output:\n${main.output()}`);
    await sleep(25);
  }
}

/** Waits until the API listens (as `untilOutput`), and returns the URL it logged. */
export async function listeningUrl(main: MainProcess): Promise<string> {
  await untilOutput(main, /API listening/);
  return /"url":"([^"]+)"[^\n]*API listening/.exec(main.output())![1]!;
}

/**
 * `startMainProcess` for one test file: whatever it started and is still running when the file
 * ends is stopped (SIGTERM), and the file waits for it to exit.
 */
export function mainProcessesStoppedAfterAll(): typeof startMainProcess {
  const running: MainProcess[] = [];
  afterAll(async () => {
    for (const main of running) if (main.child.exitCode === null && main.child.signalCode === null) main.child.kill('SIGTERM');
    await Promise.all(running.map((main) => main.exit));
  });
  return (mode, env, options) => {
    const main = startMainProcess(mode, env, options);
    running.push(main);
    return main;
  };
}

/** Pids of the postmasters serving the embedded cluster in `dataDir` (started with `-D <dataDir>/postgres`). */
export async function postmastersOf(dataDir: string): Promise<number[]> {
  const clusterDir = join(resolvePath(dataDir), 'postgres');
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
  const commandLines = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')));
  return pids.filter((_pid, index) => commandLines[index]!.split('\0').includes(clusterDir)).map(Number);
}

/**
 * Waits up to `timeoutMs` for the cluster in `dataDir` to have no postmaster, and returns those
 * still running then, after stopping them (SIGQUIT): a failed test leaves no PostgreSQL behind.
 */
export async function postmastersLeftRunning(dataDir: string, timeoutMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let running = await postmastersOf(dataDir);
  while (running.length > 0 && Date.now() < deadline) {
    await sleep(50);
    running = await postmastersOf(dataDir);
  }
  for (const pid of running) process.kill(pid, 'SIGQUIT');
  while ((await postmastersOf(dataDir)).length > 0) await sleep(50);
  return running;
}
