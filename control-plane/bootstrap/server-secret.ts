import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * SERVER_SECRET signs download URLs and derives the app role's password. Several API nodes must
 * share it (set it in the environment); a single node on its own may keep one in DATA_DIR.
 */
export async function resolveServerSecret(configured: string | undefined, dataDir: string): Promise<{ secret: string; source: 'environment' | 'data-dir' }> {
  if (configured) return { secret: configured, source: 'environment' };
  const file = join(dataDir, 'server-secret');
  if (existsSync(file)) return { secret: (await readFile(file, 'utf8')).trim(), source: 'data-dir' };
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  await writeFile(file, secret, { mode: 0o600, flag: 'wx' }).catch(async (error) => {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
  });
  return { secret: (await readFile(file, 'utf8')).trim(), source: 'data-dir' };
}
