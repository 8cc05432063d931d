import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll } from 'vitest';

/** `control-plane/main.ts` running in a child process, with everything it printed so far. */
export interface MainProcess {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
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
  return { child, output: () => output, exit };
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
