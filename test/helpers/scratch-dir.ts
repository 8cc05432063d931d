import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

// Registered while the importing test file is collected, so it runs when that file's tests are
// done, passed or failed. A data directory holds a whole PostgreSQL cluster (40–70 MB): left
// behind, every run of the suite would leave gigabytes in the temp directory.
afterAll(async () => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 })));
});

/** A new empty directory under the OS temp directory (`specwright-<purpose>-…`), removed after the test file. */
export async function scratchDir(purpose: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `specwright-${purpose}-`));
  made.push(dir);
  return dir;
}
