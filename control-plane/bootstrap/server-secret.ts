import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createSecretFile, replaceSecretFile } from './secret-file.ts';
import { makeDataDir } from './data-dir.ts';

const MINIMUM_LENGTH = 32;

/**
 * SERVER_SECRET signs download URLs and derives the app role's password. Several API nodes must
 * share it (set it in the environment); a single node on its own may keep one in DATA_DIR.
 */
export interface ServerSecret {
  secret: string;
  source: 'environment' | 'data-dir';
}

export async function resolveServerSecret(configured: string | undefined, dataDir: string): Promise<ServerSecret> {
  if (configured) return { secret: configured, source: 'environment' };
  const file = join(dataDir, 'server-secret');
  let kept = await readFile(file, 'utf8').then((text) => text.trim(), (error) => {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return undefined;
  });
  if (kept === undefined || kept === '') {
    // Absent, or empty: created by a process that died before writing it (nothing can have used it).
    await makeDataDir(dataDir);
    const secret = randomBytes(32).toString('base64url');
    if (kept === '') await replaceSecretFile(file, secret);
    else await createSecretFile(file, secret);
    // Another process creating it at the same moment may have won: everyone uses the one kept.
    kept = (await readFile(file, 'utf8')).trim();
  }
  if (kept.length < MINIMUM_LENGTH) {
    throw new Error(`${file} holds no usable secret (it must have at least ${MINIMUM_LENGTH} characters); restore it, or set SERVER_SECRET`);
  }
  return { secret: kept, source: 'data-dir' };
}
