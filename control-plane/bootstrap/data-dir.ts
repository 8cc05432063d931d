import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

// DATA_DIR may be missing (it is made when first needed), but never a file. Every failure names
// DATA_DIR, not mkdir's bare EEXIST or ENOENT.

/** Checked before anything else at start: a start that cannot use DATA_DIR fails in a moment. */
export async function assertDataDirIsDirectory(dataDir: string): Promise<void> {
  await directoriesMissingFrom(dataDir);
}

/**
 * Makes DATA_DIR when missing, one level at a time from the nearest directory that exists: Node's
 * recursive mkdir spins for ever where a file system answers ENOENT under a directory that exists
 * (a DATA_DIR under /proc), on the thread pool, where no signal ends it and exit waits for it.
 */
export async function makeDataDir(dataDir: string): Promise<void> {
  for (const directory of await directoriesMissingFrom(dataDir)) {
    await mkdir(directory).catch((error: NodeJS.ErrnoException) => {
      // Made meanwhile by another start: fine if it reads as a directory (checked below).
      if (error.code === 'EEXIST') return;
      throw new Error(`DATA_DIR ${dataDir} cannot be created at ${directory}: ${WHY_NOT_MADE[error.code ?? ''] ?? error.code ?? error.message}; create it, or set DATA_DIR to a directory that can be`);
    });
  }
  // A symbolic link to where nothing is (a volume not mounted) exists, so mkdir says EEXIST; it is still no directory.
  if (!(await stat(dataDir).catch(() => undefined))?.isDirectory()) {
    throw new Error(`DATA_DIR ${dataDir} cannot be created: a symbolic link in its path leads nowhere; mount or create its target, or set DATA_DIR to a directory`);
  }
}

const WHY_NOT_MADE: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  ENOENT: 'the file system refuses it',
};

/** DATA_DIR and its parents that do not exist yet, outermost first; refuses a file in the way. */
async function directoriesMissingFrom(dataDir: string): Promise<string[]> {
  const missing: string[] = [];
  const target = resolve(dataDir);
  for (let path = target; ; path = dirname(path)) {
    const found = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      // ENOTDIR: a file stands where one of its parent directories should be.
      if (error.code === 'ENOTDIR') throw new Error(`DATA_DIR ${dataDir} is not a directory (a file stands in its path): set DATA_DIR to a directory`);
      throw new Error(`DATA_DIR ${dataDir} cannot be read: ${error.message}`);
    });
    if (found?.isDirectory()) return missing;
    if (found && path === target) throw new Error(`DATA_DIR ${dataDir} is not a directory: set DATA_DIR to a directory (it is created when missing)`);
    if (found) throw new Error(`DATA_DIR ${dataDir} is not a directory (a file stands in its path): set DATA_DIR to a directory`);
    if (dirname(path) === path) return missing;
    missing.unshift(path);
  }
}
