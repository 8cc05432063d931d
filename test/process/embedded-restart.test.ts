import { describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { listeningUrl, mainProcessesStoppedAfterAll, untilOutput } from '../helpers/main-process.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

const startMainProcess = mainProcessesStoppedAfterAll();
const startMain = (env: Record<string, string>) => startMainProcess('all', env);

describe('npm start on the embedded database after the previous process was killed', () => {
  it('stops the PostgreSQL the killed process left running and starts again (SIGKILL cannot stop the cluster)', async () => {
    const dataDir = await scratchDir('sigkill');
    // Any free port, the one it binds read from its log: a port found free beforehand may be taken by then.
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' };

    const killed = startMain(env);
    await untilOutput(killed, /API listening/);
    killed.child.kill('SIGKILL');
    await killed.exit;

    const next = startMain(env);
    const url = await listeningUrl(next);
    expect((await call(url, '/api/health')).body.data).toMatchObject({ database: { status: 'up' } });

    // While that one runs, another start on the same DATA_DIR says why it cannot, and leaves it alone.
    const intruder = startMain(env);
    expect(await intruder.exit).toBe(1);
    expect(intruder.output()).toMatch(/DATA_DIR .* is in use by another Specwright process \(pid \d+\)/);
    expect((await call(url, '/api/health')).body.data).toMatchObject({ database: { status: 'up' } });

    next.child.kill('SIGTERM');
    expect(await next.exit).toBe(0);
  }, 60_000);
});
