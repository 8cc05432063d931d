import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mainProcessesStoppedAfterAll } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/** A maximum token age the service cannot read must stop the start, not leave tokens unbounded or all refused. */
const startMainProcess = mainProcessesStoppedAfterAll();

describe('a JWT_MAX_TOKEN_AGE_SECONDS that is not a number of seconds', () => {
  it('is refused in one line naming the variable, before anything is built', async () => {
    const dataDir = join(await scratchDir('jwt-max-token-age'), 'data');
    const main = startMainProcess('api', { JWT_MAX_TOKEN_AGE_SECONDS: '24h', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    expect(await main.exit).toBe(1);
    expect(main.output().trim().split('\n')).toEqual(['Invalid configuration:', '  JWT_MAX_TOKEN_AGE_SECONDS: must be a whole number of seconds (decimal digits), like 86400 for 24 hours']);
    expect(existsSync(dataDir)).toBe(false);
  }, 30_000);
});
