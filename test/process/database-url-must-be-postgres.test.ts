import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mainProcessesStoppedAfterAll } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/** pg reads any URL whatever its scheme: one without `postgres://` reached a server nobody meant. */
const startMainProcess = mainProcessesStoppedAfterAll();

describe('a database URL that is not a postgres:// URL', () => {
  it.each([
    ['DATABASE_URL', 'localhost:5432/specwright'],
    ['DATABASE_URL', 'mysql://owner:not-to-be-printed@db.example.com/specwright'],
    ['APP_DATABASE_URL', 'http://specwright_app:not-to-be-printed@db.example.com/specwright'],
  ])('%s=%s is refused in one line naming the variable, before anything is built or connected to', async (name, value) => {
    const dataDir = join(await scratchDir('database-url-scheme'), 'data');
    // It used to connect to 127.0.0.1:5432, and named where it pointed as "(5432/specwright)".
    const main = startMainProcess('api', { [name]: value, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    expect(await main.exit).toBe(1);
    expect(main.output().trim().split('\n')).toEqual(['Invalid configuration:', `  ${name}: must be a postgres:// or postgresql:// URL`]);
    expect(existsSync(dataDir)).toBe(false);
  }, 30_000);
});
