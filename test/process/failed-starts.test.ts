import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mainProcessesStoppedAfterAll } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/** Starts that cannot work fail at once, in one line naming the variable to change, and build nothing. */
const startMainProcess = mainProcessesStoppedAfterAll();

async function failedStart(env: Record<string, string>) {
  const main = startMainProcess('all', { PORT: '0', HOST: '127.0.0.1', ...env });
  const code = await main.exit;
  return { code, lines: main.output().trim().split('\n') };
}

const occupied: Server[] = [];
afterAll(() => occupied.forEach((server) => server.close()));

async function occupiedPort(): Promise<number> {
  const server = createServer();
  occupied.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('a start that cannot listen', () => {
  it('on a PORT in use fails before building the embedded cluster, naming PORT and HOST', async () => {
    const port = await occupiedPort();
    const dataDir = await scratchDir('port-in-use');
    const refused = await failedStart({ PORT: String(port), DATA_DIR: dataDir });
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual([`Specwright failed to start: PORT ${port} on 127.0.0.1 is in use: stop what listens there, or set PORT (or HOST) to another`]);
    // It used to build the cluster, apply migrations and create a tenant first, then say `listen EADDRINUSE`.
    expect(await readdir(dataDir)).toEqual([]);
  }, 30_000);

  it('on a HOST that does not resolve fails before building anything, naming HOST', async () => {
    const dataDir = await scratchDir('bad-host');
    const refused = await failedStart({ HOST: 'no-such-host.invalid', DATA_DIR: dataDir });
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual(['Specwright failed to start: HOST no-such-host.invalid cannot be resolved: set HOST to an address of this machine, or a name that resolves to one']);
    expect(await readdir(dataDir)).toEqual([]);
  }, 30_000);
});

describe('a DATA_DIR that is a file', () => {
  it('fails saying DATA_DIR is not a directory (it said `EEXIST: file already exists, mkdir`), and leaves the file alone', async () => {
    const file = join(await scratchDir('data-dir-file'), 'data');
    await writeFile(file, 'not a directory\n');
    const refused = await failedStart({ DATA_DIR: file });
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual([`Specwright failed to start: DATA_DIR ${file} is not a directory: set DATA_DIR to a directory (it is created when missing)`]);
    expect(await readFile(file, 'utf8')).toBe('not a directory\n');
  }, 30_000);

  it('or stands in its path', async () => {
    const file = join(await scratchDir('data-dir-file'), 'file');
    await writeFile(file, '');
    const refused = await failedStart({ DATA_DIR: join(file, 'data') });
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual([`Specwright failed to start: DATA_DIR ${join(file, 'data')} is not a directory (a file stands in its path): set DATA_DIR to a directory`]);
  }, 30_000);
});
