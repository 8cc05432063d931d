import { existsSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { mainProcessesStoppedAfterAll } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

const PASSWORD = 'not-to-be-printed-7f3a';
// A start that should have failed and did not is stopped when the file ends, not left running.
const startMainProcess = mainProcessesStoppedAfterAll();

async function failedStart(databaseUrl: string, env: Record<string, string> = {}) {
  const dataDir = join(await scratchDir('unreachable'), 'data');
  const main = startMainProcess('api', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...env });
  const code = await main.exit;
  return { code, lines: main.output().trim().split('\n'), dataDir };
}

describe('a DATABASE_URL the service cannot use at boot', () => {
  it('refuses in one line naming DATABASE_URL and where it points, without the password, and leaves DATA_DIR alone', async () => {
    const refused = await failedStart(`postgres://owner:${PASSWORD}@127.0.0.1:1/specwright`);
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual([
      'Specwright failed to start: cannot connect to the database in DATABASE_URL (owner@127.0.0.1:1/specwright): connect ECONNREFUSED 127.0.0.1:1',
    ]);
    expect(existsSync(refused.dataDir)).toBe(false); // no server-secret generated for a start that never began
  }, 30_000);

  it('says so for a wrong password too', async () => {
    const url = new URL(inject('postgres').ownerUrl);
    url.password = PASSWORD;
    const refused = await failedStart(url.toString());
    expect(refused.code).toBe(1);
    expect(refused.lines).toHaveLength(1);
    expect(refused.lines[0]).toMatch(/^Specwright failed to start: cannot connect to the database in DATABASE_URL \(postgres@127\.0\.0\.1:\d+\/postgres\): password authentication failed for user "postgres"$/);
    expect(refused.lines[0]).not.toContain(PASSWORD);
    expect(existsSync(refused.dataDir)).toBe(false);
  }, 30_000);
});

describe('a DATABASE_URL whose server accepts connections and never answers', () => {
  it('fails the start once DATABASE_CONNECT_TIMEOUT_MS has passed, saying so, instead of waiting for ever', async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => void held.push(socket.on('error', () => {})));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as { port: number };
      const refused = await Promise.race([
        failedStart(`postgres://owner:${PASSWORD}@127.0.0.1:${port}/specwright`, { DATABASE_CONNECT_TIMEOUT_MS: '500' }),
        new Promise<string>((resolve) => setTimeout(() => resolve('still starting after 20 s'), 20_000)),
      ]);
      expect(refused).toEqual({
        code: 1,
        lines: [`Specwright failed to start: cannot connect to the database in DATABASE_URL (owner@127.0.0.1:${port}/specwright): no answer within DATABASE_CONNECT_TIMEOUT_MS (500 ms)`],
        dataDir: expect.any(String),
      });
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  }, 30_000);
});

describe('an APP_DATABASE_URL the service cannot use at boot', () => {
  it('refuses in one line naming APP_DATABASE_URL, without the password, instead of serving 503 to every request', async () => {
    const database = await createTestDatabase();
    const appUrl = new URL(database.appUrl);
    appUrl.password = PASSWORD;
    const refused = await failedStart(database.ownerUrl, { APP_DATABASE_URL: appUrl.toString(), SERVER_SECRET: TEST_SERVER_SECRET });
    expect(refused.code).toBe(1);
    expect(refused.lines).toHaveLength(1);
    expect(refused.lines[0]).toMatch(/^Specwright failed to start: cannot connect to the database in APP_DATABASE_URL \(specwright_app@127\.0\.0\.1:\d+\/test_\w+\): password authentication failed for user "specwright_app"$/);
    expect(refused.lines[0]).not.toContain(PASSWORD);
    expect(existsSync(refused.dataDir)).toBe(false);
  }, 30_000);

  it('refuses one naming a database its server does not have', async () => {
    const database = await createTestDatabase();
    const appUrl = new URL(database.appUrl);
    appUrl.pathname = '/no_such_database';
    const refused = await failedStart(database.ownerUrl, { APP_DATABASE_URL: appUrl.toString(), SERVER_SECRET: TEST_SERVER_SECRET });
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual([expect.stringMatching(/^Specwright failed to start: cannot connect to the database in APP_DATABASE_URL \(specwright_app@127\.0\.0\.1:\d+\/no_such_database\): database "no_such_database" does not exist$/)]);
    expect(existsSync(refused.dataDir)).toBe(false);
  }, 30_000);
});
