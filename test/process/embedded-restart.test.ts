import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../control-plane/db/embedded-postgres.ts';
import { call } from '../helpers/http.ts';

interface Spawned {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

const running: Spawned[] = [];
afterAll(async () => {
  for (const spawned of running) if (spawned.child.exitCode === null) spawned.child.kill('SIGTERM');
  await Promise.all(running.map((spawned) => spawned.exit));
});

function startMain(env: Record<string, string>): Spawned {
  const cleanEnv = { ...process.env };
  delete cleanEnv.DATABASE_URL;
  const child = spawn(process.execPath, ['--no-node-snapshot', 'control-plane/main.ts', 'all'], {
    env: { ...cleanEnv, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const spawned = { child, output: () => out, exit };
  running.push(spawned);
  return spawned;
}

async function untilListening(spawned: Spawned): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!/API listening/.test(spawned.output())) {
    if (spawned.child.exitCode !== null || Date.now() > deadline) throw new Error(`no "API listening"; output:\n${spawned.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('npm start on the embedded database after the previous process was killed', () => {
  it('stops the PostgreSQL the killed process left running and starts again (SIGKILL cannot stop the cluster)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'specwright-sigkill-'));
    const port = await findFreePort();
    const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' };

    const killed = startMain(env);
    await untilListening(killed);
    killed.child.kill('SIGKILL');
    await killed.exit;

    const next = startMain(env);
    await untilListening(next);
    expect((await call(`http://127.0.0.1:${port}`, '/api/health')).body.data).toMatchObject({ database: { status: 'up' } });

    // While that one runs, another start on the same DATA_DIR says why it cannot, and leaves it alone.
    const intruder = startMain({ ...env, PORT: String(await findFreePort()) });
    expect(await intruder.exit).toBe(1);
    expect(intruder.output()).toMatch(/DATA_DIR .* is in use by another Specwright process \(pid \d+\)/);
    expect((await call(`http://127.0.0.1:${port}`, '/api/health')).body.data).toMatchObject({ database: { status: 'up' } });

    next.child.kill('SIGTERM');
    expect(await next.exit).toBe(0);
  }, 60_000);
});
