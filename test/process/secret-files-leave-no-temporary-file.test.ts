import { mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSecretFile, replaceSecretFile } from '../../control-plane/bootstrap/secret-file.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * Secret files (bootstrap.json with the owner's API key, the server secret) are written to a
 * temporary file beside them first. When that fails, the temporary file must not stay behind: it
 * holds a key of a tenant that was never created, readable by whoever can read the directory later.
 */
const SECRET = '{"apiKey": "swk_secret_never_left_behind"}\n';

/** The prototype of the handles `open` returns, so one write can be made to fail as a full disk does. */
async function fileHandlePrototype(dir: string) {
  const handle = await open(join(dir, 'probe'), 'w');
  await handle.close();
  return Object.getPrototypeOf(handle) as { writeFile: (data: string) => Promise<void> };
}

function failNextWrite(prototype: { writeFile: (data: string) => Promise<void> }) {
  vi.spyOn(prototype, 'writeFile').mockRejectedValueOnce(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('replaceSecretFile', () => {
  it('leaves no temporary file, and the old file as it was, when writing the new one fails', async () => {
    const dir = await scratchDir('secret-file');
    const prototype = await fileHandlePrototype(dir);
    await writeFile(join(dir, 'bootstrap.json'), '{}\n', { mode: 0o600 });
    failNextWrite(prototype);

    await expect(replaceSecretFile(join(dir, 'bootstrap.json'), SECRET)).rejects.toMatchObject({ code: 'ENOSPC' });
    expect((await readdir(dir)).sort()).toEqual(['bootstrap.json', 'probe']);
    expect(await readFile(join(dir, 'bootstrap.json'), 'utf8')).toBe('{}\n');
  });

  it('leaves no temporary file when the rename fails (the target is a directory)', async () => {
    const dir = await scratchDir('secret-file');
    await mkdir(join(dir, 'bootstrap.json'));

    await expect(replaceSecretFile(join(dir, 'bootstrap.json'), SECRET)).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['bootstrap.json']);
    expect(await readdir(join(dir, 'bootstrap.json'))).toEqual([]);
  });
});

describe('createSecretFile', () => {
  it('leaves no file at all when writing fails', async () => {
    const dir = await scratchDir('secret-file');
    const prototype = await fileHandlePrototype(dir);
    failNextWrite(prototype);

    await expect(createSecretFile(join(dir, 'server-secret'), SECRET)).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await readdir(dir)).toEqual(['probe']);
  });
});
