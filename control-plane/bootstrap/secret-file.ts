import { randomBytes } from 'node:crypto';
import { link, open, rename, unlink } from 'node:fs/promises';

/**
 * Writes `text` to a new 0600 file beside `file` and flushes it, so it is never seen half-written.
 * A write that fails (a full disk) removes the file: it may hold part of a secret nobody will use.
 */
async function writeTemporary(file: string, text: string): Promise<string> {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
  return temporary;
}

/**
 * Replaces `file` with `text` in one step: readers see the old file or the whole new one, and the
 * new one is 0600 whatever mode a file left there before had.
 */
export async function replaceSecretFile(file: string, text: string): Promise<void> {
  const temporary = await writeTemporary(file, text);
  try {
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}

/** Creates `file` (0600) holding `text` unless it exists; false when another writer got there first. */
export async function createSecretFile(file: string, text: string): Promise<boolean> {
  const temporary = await writeTemporary(file, text);
  try {
    await link(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => {});
  }
}
