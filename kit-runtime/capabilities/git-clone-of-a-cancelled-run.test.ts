import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGitServer, type TestGitServer } from '../test-support/git-http-server.ts';
import { seedLargeRepository, startPackRelay } from '../test-support/large-repository.ts';
import { createGitCapabilities } from './git-commit.ts';
import { createKitRuntime } from '../kit-runtime.ts';
import { hostileKit } from '../test-support/kits.ts';

const TOKEN = 'tok_dir_after_run';
let git: TestGitServer;
let relay: Awaited<ReturnType<typeof startPackRelay>>;
let relayPort: number;
let onPackSent: () => void = () => {};
beforeAll(async () => {
  git = await startTestGitServer({ token: TOKEN });
  await seedLargeRepository(git, 'large', TOKEN, Array(4).fill(4 * 1024 * 1024));
  relay = await startPackRelay(new URL(git.url('large')), { onPackSent: () => onPackSent() });
  relayPort = relay.port;
}, 60_000);
afterAll(async () => {
  relay?.close();
  await git?.close();
});

// A cancelled run answers at once; its gitCommit, writing out a clone (which takes no signal), goes
// on until it notices. The runtime says when such calls have ended, so a worker shutting down
// waits for them instead of exiting with the clone of a private repository left in the temp directory.
it('a run cancelled while gitCommit writes its clone: the runtime tells when the call has ended, its clone directory removed', async () => {
  const workRoot = await mkdtemp(join(tmpdir(), 'specwright-git-work-'));
  const runtime = createKitRuntime({ limits: { timeoutMs: 20_000 } });
  try {
    const { gitCommit } = createGitCapabilities({
      workRoot,
      openCredential: async () => ({ token: TOKEN, repository: `http://127.0.0.1:${relayPort}` }),
      isAllowedRemote: (url) => url.hostname === '127.0.0.1',
    });
    const cancel = new AbortController();
    // The whole pack has been sent: the worker is indexing it and writing the checkout when it shuts down.
    onPackSent = () => cancel.abort();
    const kit = hostileKit({ hooks: { APPLY: `async function apply(c, kit) { return await kit.gitCommit({ repository: c.input.repository, message: 'm', files: [{ path: 'a.md', content: 'a' }], credential: 'git-token' }); }` } });
    const result = await runtime.execute(kit, { tenantId: 't', input: { name: 'x', repository: `http://127.0.0.1:${relayPort}/large.git` }, capabilities: { gitCommit }, signal: cancel.signal });
    expect(result.error?.message).toBe('the run was cancelled');
    // What a worker does next at shutdown, before its process exits.
    expect(await runtime.settleHostCalls(30_000)).toBe(true);
    expect(await readdir(workRoot)).toEqual([]);
  } finally {
    runtime.close();
    await rm(workRoot, { recursive: true, force: true });
  }
}, 60_000);
