import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGitServer, type TestGitServer } from '../test-support/git-http-server.ts';
import { seedLargeRepository, startPackRelay } from '../test-support/large-repository.ts';
import { createGitCapabilities } from './git-commit.ts';
import { gitHttpClient } from './git-remote-policy.ts';

/**
 * A git call stopped while a response body is still arriving (a clone of a large repository cut
 * off by the time limit or a worker shutdown) must still end: its clone directory removed, its
 * promise settled. isomorphic-git's Node body iterator drops an error that lands between two reads,
 * so without help the next read waits for ever.
 */
const TOKEN = 'tok_mid_transfer_9c1';
let git: TestGitServer;
let relay: Awaited<ReturnType<typeof startPackRelay>>;
let relayPort: number;
/** Bytes of upload-pack answers the relay has passed on; `onBytes` hears of each chunk. */
let onBytes: (total: number) => void = () => {};

beforeAll(async () => {
  git = await startTestGitServer({ token: TOKEN });
  await seedLargeRepository(git, 'large', TOKEN, [16 * 1024 * 1024]);
  relay = await startPackRelay(new URL(git.url('large')), { onPackBytes: (total) => onBytes(total) });
  relayPort = relay.port;
}, 60_000);
afterAll(async () => {
  relay?.close();
  await git?.close();
});

/** What a promise has come to within `ms`: its value or error message, or 'still pending'. */
const within = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.then(() => 'settled', (error: Error) => `refused: ${error.message}`), new Promise((resolve) => setTimeout(() => resolve('still pending'), ms))]);

describe('a git call stopped while a response body is arriving', () => {
  it("the HTTP client's body ends once its signal aborts, also when no read was waiting", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(1000, 1));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const controller = new AbortController();
      const client = gitHttpClient({ publicAddressesOnly: false, signal: controller.signal });
      const response = await client.request({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, method: 'GET', headers: {} });
      const body = response.body as AsyncIterator<Uint8Array>;
      expect((await body.next()).done).toBe(false);
      // The reader is busy with that chunk (parsing a pack) when the phase ends.
      controller.abort();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await within(body.next(), 2000)).not.toBe('still pending');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('gitCommit settles and leaves no clone directory behind', async () => {
    const workRoot = await mkdtemp(join(tmpdir(), 'specwright-git-work-'));
    try {
      const { gitCommit } = createGitCapabilities({
        workRoot,
        openCredential: async () => ({ token: TOKEN, repository: `http://127.0.0.1:${relayPort}` }),
        isAllowedRemote: (url) => url.hostname === '127.0.0.1',
      });
      const phase = new AbortController();
      // Stopped a quarter of the way through the pack, while it streams.
      onBytes = (total) => {
        if (total > 4 * 1024 * 1024) phase.abort();
      };
      const argument = { repository: `http://127.0.0.1:${relayPort}/large.git`, message: 'm', files: [{ path: 'a.txt', content: 'a' }], credential: 'git-token' };
      const calling = Promise.resolve(gitCommit.call(argument, { phase: 'APPLY', tenantId: 't', kitRef: 'git-publish@1.0.0', signal: phase.signal }));
      expect(await within(calling, 10_000)).toBe('refused: the git operation was stopped: its phase or run ended first');
      expect(await readdir(workRoot)).toEqual([]);
    } finally {
      onBytes = () => {};
      await rm(workRoot, { recursive: true, force: true });
    }
  }, 60_000);
});
