import { randomBytes } from 'node:crypto';
import { chmod, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { listeningUrl, mainProcessesStoppedAfterAll, postmastersOf } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * The embedded PostgreSQL ran with the service's whole environment: SERVER_SECRET, JWT_SECRET and
 * whatever else the service was given sat in /proc/<postmaster>/environ for as long as it ran,
 * readable by its OS user (and so by its superuser's file functions).
 */
const startMainProcess = mainProcessesStoppedAfterAll();

describe('the embedded PostgreSQL', () => {
  it("runs without the service's secrets in its environment", async () => {
    const dataDir = await scratchDir('postgres-environment');
    await chmod(dataDir, 0o755); // run as root, PostgreSQL runs as its own user and must reach it
    const secrets = { SERVER_SECRET: randomBytes(32).toString('hex'), JWT_SECRET: randomBytes(32).toString('hex'), SOME_CLOUD_TOKEN: randomBytes(16).toString('hex') };
    const main = startMainProcess('all', { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...secrets });
    await listeningUrl(main);

    const [postmaster] = await postmastersOf(dataDir);
    const environment = (await readFile(`/proc/${postmaster}/environ`, 'utf8')).split('\0').filter(Boolean);
    expect(environment.map((entry) => entry.split('=')[0]).sort()).toEqual(expect.arrayContaining(['LC_MESSAGES', 'PATH']));
    for (const [name, value] of Object.entries(secrets)) {
      expect(environment.filter((entry) => entry.startsWith(`${name}=`) || entry.includes(value))).toEqual([]);
    }

    main.child.kill('SIGTERM');
    expect(await main.exit).toBe(0);
  }, 90_000);
});
