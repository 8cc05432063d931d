import { chmod, readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { mainProcessesStoppedAfterAll, postmastersLeftRunning } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * `DATA_DIR=/var/lib/specwright ` (a space an env file kept) named another directory: the start
 * built a fresh cluster and a fresh first-run tenant there, away from the data, without a word.
 */
const startMainProcess = mainProcessesStoppedAfterAll();

describe('a DATA_DIR that begins or ends with white space', () => {
  it('is refused naming DATA_DIR, and no fresh database is made', async () => {
    const parent = await scratchDir('data-dir-space');
    await chmod(parent, 0o755); // run as root, the embedded PostgreSQL must reach it should the start go ahead
    const dataDir = `${parent}/data `;
    const main = startMainProcess('all', { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    const code = await main.exit;
    expect(await postmastersLeftRunning(dataDir)).toEqual([]);
    expect(code).toBe(1);
    expect(main.output().trim().split('\n')).toEqual([
      'Invalid configuration:',
      '  DATA_DIR: begins or ends with white space, most likely a stray character from where it was set: remove it (a path that differs by it would start a fresh database away from the data)',
    ]);
    expect(await readdir(parent)).toEqual([]);
  }, 60_000);
});
