import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { appRolePassword, appRoleUrl } from '../../control-plane/db/app-role.ts';
import { startMainProcess, untilOutput, type MainProcess } from '../helpers/main-process.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * The role specwright_app belongs to the whole PostgreSQL server, so this runs on a cluster of its
 * own (the first node's embedded one), never on the one other test files share.
 */
const running: MainProcess[] = [];
afterAll(() => running.forEach((main) => main.child.kill('SIGKILL')));

function start(mode: 'all' | 'api' | 'worker', env: Record<string, string>): MainProcess {
  const main = startMainProcess(mode, { HOST: '127.0.0.1', PORT: '0', ...env });
  running.push(main);
  return main;
}

async function refusal(main: MainProcess): Promise<{ code: number | null; output: string }> {
  const code = await Promise.race([main.exit, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 20_000))]);
  if (code === 'running') {
    main.child.kill('SIGKILL');
    throw new Error(`the node started instead of refusing:\n${main.output()}`);
  }
  return { code, output: main.output() };
}

/** Logs in as the app role on a new connection, as the first node's pool does when it recycles one. */
async function appRoleLogsIn(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

describe('a node whose SERVER_SECRET is not the cluster’s', () => {
  it('refuses to start, naming SERVER_SECRET, and changes nothing the running nodes depend on', async () => {
    const firstDir = await scratchDir('cluster');
    const first = start('all', { DATA_DIR: firstDir });
    await untilOutput(first, /API listening/);
    const pgPort = /"port":(\d+)[^\n]*embedded PostgreSQL started/.exec(first.output())?.[1];
    const password = (await readFile(join(firstDir, 'postgres-password'), 'utf8')).trim();
    const ownerUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/specwright`;
    const clusterSecret = (await readFile(join(firstDir, 'server-secret'), 'utf8')).trim();
    const appUrl = appRoleUrl(ownerUrl, appRolePassword(clusterSecret));
    expect(await appRoleLogsIn(appUrl)).toBe(true);

    const otherSecret = 'another-server-secret-that-is-long-enough-0123456789';
    const attempts: Array<{ mode: 'api' | 'worker'; env: Record<string, string> }> = [
      { mode: 'api', env: {} }, // SERVER_SECRET unset: a fresh one generated in its own DATA_DIR
      { mode: 'api', env: { SERVER_SECRET: otherSecret } },
      { mode: 'worker', env: { SERVER_SECRET: otherSecret } },
    ];
    for (const attempt of attempts) {
      const node = start(attempt.mode, { DATABASE_URL: ownerUrl, DATA_DIR: await scratchDir('node'), ...attempt.env });
      const { code, output } = await refusal(node);
      expect(code, output).toBe(1);
      const errorLine = output.split('\n').find((line) => /not the one this database was set up with/.test(line));
      expect(errorLine, output).toMatch(/SERVER_SECRET/);
      expect(output).not.toMatch(/API listening|worker started/);
      // The first node can still open connections as the app role.
      expect(await appRoleLogsIn(appUrl)).toBe(true);
    }

    // Another database on the same server holds no key ring of its own, but shares the app role.
    await ownerQuery(ownerUrl, 'create database second_app');
    const elsewhere = start('api', { DATABASE_URL: ownerUrl.replace(/\/specwright$/, '/second_app'), SERVER_SECRET: otherSecret, DATA_DIR: await scratchDir('node') });
    const { code, output } = await refusal(elsewhere);
    expect(code, output).toBe(1);
    expect(output).toMatch(/SERVER_SECRET is not the one this database was set up with \(the role specwright_app already logs in/);
    expect(await appRoleLogsIn(appUrl)).toBe(true);

    // A node given the cluster's secret joins, and stops cleanly; the first node keeps serving.
    const joined = start('api', { DATABASE_URL: ownerUrl, SERVER_SECRET: clusterSecret, DATA_DIR: await scratchDir('node') });
    await untilOutput(joined, /API listening/);
    joined.child.kill('SIGTERM');
    expect(await joined.exit, joined.output()).toBe(0);
    expect(await appRoleLogsIn(appUrl)).toBe(true);

    first.child.kill('SIGTERM');
    expect(await first.exit, first.output()).toBe(0);
  }, 180_000);
});
