import { randomUUID } from 'node:crypto';
import { readdir, symlink } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { startMainProcess, type MainProcess } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * A DATA_DIR the start cannot make is refused naming DATA_DIR and why. Under /proc, Node's recursive
 * mkdir spun for ever (100% CPU, deaf to SIGTERM and SIGINT); a symbolic link to a volume that is
 * not mounted answered a bare "ENOENT: no such file or directory, mkdir".
 */
const started: MainProcess[] = [];
afterAll(async () => {
  // SIGKILL: a start spinning in mkdir heeds nothing else.
  for (const main of started) if (main.child.exitCode === null && main.child.signalCode === null) main.killNow();
  await Promise.all(started.map((main) => main.exit));
});
const start = (dataDir: string) => {
  const main = startMainProcess('all', { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
  started.push(main);
  return main;
};

describe('a DATA_DIR that cannot be made', () => {
  it('on a file system that refuses it (under /proc) fails the start naming DATA_DIR, instead of spinning for ever', async () => {
    const dataDir = `/proc/specwright-${randomUUID()}/data`;
    const main = start(dataDir);
    expect(await main.exit).toBe(1);
    expect(main.output().trim()).toBe(
      `Specwright failed to start: DATA_DIR ${dataDir} cannot be created at ${dataDir.slice(0, -'/data'.length)}: the file system refuses it; create it, or set DATA_DIR to a directory that can be`,
    );
  }, 60_000);

  it('through a symbolic link that leads nowhere (a volume not mounted) fails the start saying so, and makes nothing', async () => {
    const parent = await scratchDir('data-dir-dangling-link');
    const dataDir = `${parent}/data`;
    await symlink(`${parent}/volume-not-mounted`, dataDir);
    const main = start(dataDir);
    expect(await main.exit).toBe(1);
    expect(main.output().trim()).toBe(
      `Specwright failed to start: DATA_DIR ${dataDir} cannot be created: a symbolic link in its path leads nowhere; mount or create its target, or set DATA_DIR to a directory`,
    );
    expect(await readdir(parent)).toEqual(['data']);
  }, 60_000);
});
