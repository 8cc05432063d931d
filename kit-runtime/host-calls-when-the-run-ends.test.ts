/**
 * A host call outlives nothing it belongs to: once its phase or run is over (time limit, failure,
 * cancellation, the runtime closing) its signal aborts, the capability stops, and the hook is never
 * told it succeeded. A push that reached the remote after its run was reported failed is what this
 * guards against: the user saw "failed" and found the commit in their repository.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKitRuntime, type KitRuntime } from './kit-runtime.ts';
import type { KitPackage } from './kit-package.ts';
import { createGitCapabilities } from './capabilities/git-commit.ts';
import type { HostCapability } from './sandbox/host-bridge.ts';
import { startTestGitServer, type TestGitServer } from './test-support/git-http-server.ts';
import { hostileKit } from './test-support/kits.ts';

const TOKEN = 'tok_6c1f0e92ab';
let server: TestGitServer;
beforeAll(async () => {
  server = await startTestGitServer({ token: TOKEN });
});
afterAll(() => server.close());

/** A capability as given, and how each of its calls ended once it was done with it (not when the run stopped waiting). */
function watched(capability: HostCapability): { capability: HostCapability; outcomes: Array<Promise<string>> } {
  const outcomes: Array<Promise<string>> = [];
  return {
    outcomes,
    capability: {
      ...capability,
      call: (argument, call) => {
        const answer = Promise.resolve(capability.call(argument, call));
        outcomes.push(answer.then(() => 'resolved', (error: Error) => `rejected: ${error.message}`));
        return answer;
      },
    },
  };
}

/**
 * Boots the kit's isolate and leaves it pooled, so that a timed run spends its time limit on the
 * host call and not on starting up, however loaded the machine (a run that timed out before making
 * the call fails its test loudly rather than passing).
 */
async function warmUp(runtime: KitRuntime, kit: KitPackage): Promise<void> {
  const warm = await runtime.execute(kit, { tenantId: 't', input: { name: 'x' }, options: { dryRun: true } });
  expect(warm.status, warm.message ?? '').toBe('completed');
}

describe('a git push under way when its run reaches its time limit', () => {
  it('is stopped: the run fails on its time limit and the remote never gets the commit, even once the server answers', async () => {
    await server.createRepository('late', { initialCommit: true });
    const before = await server.git('late', 'rev-parse', 'main');
    const { gitCommit } = createGitCapabilities({
      openCredential: async () => ({ token: TOKEN, repository: server.url('late') }),
      isAllowedRemote: (url) => url.hostname === '127.0.0.1',
    });
    const { capability, outcomes } = watched(gitCommit);
    // The server sits on the push's first request (which refs it has) past the run's time limit.
    const held = server.holdNext(({ method, path }) => method === 'GET' && path === '/late.git/info/refs?service=git-receive-pack');
    const kit = hostileKit({
      hooks: {
        APPLY: `async function apply(c, kit) { return await kit.gitCommit({ repository: c.input.repository, message: 'publish', files: [{ path: 'a.md', content: 'a' }], credential: 'git-token' }); }`,
      },
    });
    const runtime = createKitRuntime({ limits: { timeoutMs: 4000 } });
    try {
      await warmUp(runtime, kit);
      const result = await runtime.execute(kit, { tenantId: 't', input: { name: 'x', repository: server.url('late') }, capabilities: { gitCommit: capability } });
      expect(result.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'time', phase: 'APPLY', message: 'kit exceeded its time limit of 4000 ms' });
      // It was the push that the time limit cut off, not something before it.
      expect(server.requests.some(({ path }) => path === '/late.git/info/refs?service=git-receive-pack')).toBe(true);
      held.release();
      // Once the call is done with (it used to go on and push), nothing reached the remote.
      expect(await Promise.all(outcomes)).toEqual(['rejected: the git operation was stopped: its phase or run ended first']);
      expect(server.requests.filter(({ path }) => path === '/late.git/git-receive-pack')).toEqual([]);
      expect(await server.git('late', 'rev-parse', 'main')).toBe(before);
    } finally {
      held.release();
      runtime.close();
    }
  });
});

describe('the signal a capability is given', () => {
  it('aborts when its phase ends, and not before', async () => {
    const seen: Array<{ signal: AbortSignal; abortedDuringCall: boolean }> = [];
    const record: HostCapability = { call: (_argument, { signal }) => void seen.push({ signal, abortedDuringCall: signal.aborted }) };
    const runtime = createKitRuntime();
    try {
      const kit = hostileKit({ hooks: { PLAN: 'async function plan(c, kit) { await kit.record({}); return null; }' } });
      const result = await runtime.execute(kit, { tenantId: 't', input: { name: 'x' }, capabilities: { record } });
      expect(result.status, result.message ?? '').toBe('completed');
      expect(seen.map(({ signal, abortedDuringCall }) => [abortedDuringCall, signal.aborted])).toEqual([[false, true]]);
    } finally {
      runtime.close();
    }
  });

  it('aborts at the time limit, and the hook is never told of a success that came after', async () => {
    const seen: AbortSignal[] = [];
    const slow: HostCapability = {
      // Answers success only once told to stop: too late for the hook to be told it succeeded.
      call: (_argument, { signal }) => {
        seen.push(signal);
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve({ published: true })));
      },
    };
    const runtime = createKitRuntime({ limits: { timeoutMs: 2000 } });
    try {
      const kit = hostileKit({
        hooks: { APPLY: 'async function apply(c, kit) { try { await kit.slow({}); kit.log("info", "succeeded"); } catch (e) { kit.log("info", e.message); } return null; }' },
      });
      await warmUp(runtime, kit);
      const result = await runtime.execute(kit, { tenantId: 't', input: { name: 'x' }, capabilities: { slow } });
      expect(result.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'time', phase: 'APPLY', message: 'kit exceeded its time limit of 2000 ms' });
      expect(seen.map((signal) => [signal.aborted, (signal.reason as Error).message])).toEqual([[true, 'kit exceeded its time limit of 2000 ms']]);
      // The hook may or may not get to log before its isolate is disposed; never a success.
      expect(result.logs.map((entry) => entry.message)).not.toContain('succeeded');
    } finally {
      runtime.close();
    }
  });

  it("aborts when the caller cancels the run, which fails even though the hook swallowed the capability's error", async () => {
    const cancel = new AbortController();
    const publish: HostCapability = {
      call: (_argument, { signal }) => {
        cancel.abort();
        // A capability that ignores its signal and answers success anyway.
        return { published: true, aborted: signal.aborted };
      },
    };
    const runtime = createKitRuntime();
    try {
      const kit = hostileKit({
        hooks: { APPLY: 'async function apply(c, kit) { try { await kit.publish({}); kit.log("info", "succeeded"); } catch (e) { kit.log("info", e.message); } return { done: true }; }' },
      });
      const result = await runtime.execute(kit, { tenantId: 't', input: { name: 'x' }, capabilities: { publish }, signal: cancel.signal });
      expect(result.error).toEqual({ code: 'PHASE_FAILED', phase: 'APPLY', message: 'the run was cancelled' });
      expect(result.applyResult).toBeNull();
      expect(result.logs.map((entry) => entry.message)).toEqual(['kit.publish was stopped: its phase or run ended first']);
    } finally {
      runtime.close();
    }
  });

  it('aborts when the runtime closes under a run', async () => {
    const runtime = createKitRuntime();
    const seen: AbortSignal[] = [];
    const wait: HostCapability = {
      call: (_argument, { signal }) => {
        seen.push(signal);
        runtime.close();
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped'))));
      },
    };
    const kit = hostileKit({ hooks: { APPLY: 'async function apply(c, kit) { await kit.wait({}); return null; }' } });
    const result = await runtime.execute(kit, { tenantId: 't', input: { name: 'x' }, capabilities: { wait } });
    expect(result.error).toEqual({ code: 'PHASE_FAILED', phase: 'APPLY', message: 'the run was cancelled' });
    expect(seen.map((signal) => signal.aborted)).toEqual([true]);
  });
});
