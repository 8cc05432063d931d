/**
 * Kits that make the host, not their isolate, do the work: code left running in a pooled isolate
 * after its hook has answered, and kit-made text that a host regular expression used to take
 * quadratic time over (on the worker's own thread, or the validation thread). Each must end within
 * the run's limits with a clear message, and leave the runtime fit for the next run.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createKitRuntime } from './kit-runtime.ts';
import { createGitCapabilities } from './capabilities/git-commit.ts';
import { hostileKit, markdownKit } from './test-support/kits.ts';

const runtime = createKitRuntime({ limits: { timeoutMs: 5000 }, validation: { timeoutMs: 5000 } });
afterAll(() => runtime.close());
const echo = { call: (argument: unknown) => argument };

describe('work a hook leaves behind', () => {
  it('ends the phase of a hook that leaves an endless chain of promise jobs after a host reply, at the time limit, and never pools its busy isolate', async () => {
    // Code resumed by a host reply runs outside isolated-vm's timeout. Its chain of jobs never ended,
    // yet the hook's answer left the isolate: the run completed, and its isolate went back to the
    // pool still busy, for good — the next run of that kit and tenant timed out waiting for it.
    const short = createKitRuntime({ limits: { timeoutMs: 1000 } });
    try {
      const kit = hostileKit({
        hooks: { VERIFY: 'async function verify(c, kit) { if (c.input.flood) { await kit.echo(1); (function f() { Promise.resolve().then(f); })(); } return null; }' },
      });
      const flooded = await short.execute(kit, { tenantId: 't', input: { name: 'x', flood: true }, capabilities: { echo } });
      expect(flooded.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'time', phase: 'VERIFY', message: 'kit exceeded its time limit of 1000 ms' });
      const next = await short.execute(kit, { tenantId: 't', input: { name: 'x' }, capabilities: { echo } });
      expect(next.status, next.message ?? '').toBe('completed');
    } finally {
      short.close();
    }
  });
});

describe('a host call that holds the thread', () => {
  it('fails the run on its time limit when the phase ends past it, even if the hook answered before the watchdog could fire', async () => {
    // A capability busy on this thread past the deadline (here from a timer's callback, as
    // isomorphic-git's work resumes) kept the watchdog's timer from firing in time; the hook's
    // answer came first, and the run completed past its time limit.
    const short = createKitRuntime({ limits: { timeoutMs: 1000 } });
    try {
      const busy = { call: async () => { await new Promise((resolve) => setTimeout(resolve, 10)); const end = performance.now() + 1500; while (performance.now() < end); return null; } };
      const kit = hostileKit({ hooks: { APPLY: 'async function apply(c, kit) { await kit.busy({}); return { done: true }; }' } });
      const result = await short.execute(kit, { tenantId: 't', input: { name: 'x' }, capabilities: { busy } });
      expect(result.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'time', phase: 'APPLY', message: 'kit exceeded its time limit of 1000 ms' });
    } finally {
      short.close();
    }
  });
});

describe("kit-made text the host's regular expressions used to take quadratic time over", () => {
  it('cleans a log line of 80,000 spaces on one line within the time limit', async () => {
    // /\s*\n\s*/ tried each space against all the ones after it: 25 s for 100,000, on the worker's thread.
    const kit = hostileKit({ hooks: { PLAN: 'function plan(c, kit) { kit.log("info", " ".repeat(80000) + "end"); return null; }' } });
    const result = await runtime.execute(kit, { tenantId: 't', input: { name: 'x' } });
    expect(result.status, result.message ?? '').toBe('completed');
    expect(result.logs).toHaveLength(1);
    expect(result.logs[0]!.message).toBe('end');
  });

  it('counts the code fences of a markdown output of 80,000 blank lines within the validation limit', async () => {
    // /^\s*(```|~~~)/gm tried each line start against all the blank lines after it: 28 s for 100,000.
    const kit = markdownKit('blank-lines', { template: '{{{blank}}}\n~~~\nx\n{{{blank}}}' });
    const result = await runtime.execute(kit, { tenantId: 't', input: { blank: '\n'.repeat(80_000) } });
    expect(result.error).toBeNull();
    expect(result.outputs[0]).toMatchObject({ status: 'warning', validationWarnings: ['a fenced code block is not closed'] });
  });

  describe('a git remote URL', () => {
    const apply = (argument: object) =>
      hostileKit({
        hooks: {
          APPLY: `async function apply(c, kit) { try { await kit.gitCommit(${JSON.stringify(argument)}); return { refused: null }; } catch (e) { return { refused: e.message.slice(0, 200) }; } }`,
        },
      });
    const run = (argument: object, capabilities: ReturnType<typeof createGitCapabilities>) =>
      runtime.execute(apply(argument), { tenantId: 't', input: { name: 'x' }, capabilities: { ...capabilities } });
    const files = [{ path: 'a.md', content: 'a' }];

    it('with a host of 80,000 dots is refused by the default remote policy within the time limit', async () => {
      // /\.+$/ on the host name: 21 s for 100,000 dots, before any request.
      const repository = `https://a${'.'.repeat(80_000)}b.localhost/repo.git`;
      const result = await run({ repository, message: 'm', files }, createGitCapabilities());
      expect(result.status, result.message ?? '').toBe('completed');
      expect((result.applyResult as { refused: string }).refused).toMatch(/^repository https:\/\/a\.+$/);
    });

    it('with a path of 80,000 slashes is checked against its credential\'s repository within the time limit', async () => {
      // /\/+$/ on the path, in isWithinRepository: 18 s for 100,000 slashes, before any request.
      const repository = `https://127.0.0.1:9/${'/'.repeat(80_000)}x`;
      const capabilities = createGitCapabilities({
        openCredential: async () => ({ token: 'tok_0123456789', repository: 'https://127.0.0.1:9/acme' }),
        isAllowedRemote: (url) => url.hostname === '127.0.0.1',
      });
      const result = await run({ repository, message: 'm', files, credential: 'git-token' }, capabilities);
      expect(result.status, result.message ?? '').toBe('completed');
      expect((result.applyResult as { refused: string }).refused).toMatch(/^credential "git-token" may not be sent to https:\/\/127\.0\.0\.1:9\/\/\/\/+$/);
    });
  });
});

describe('messages built from what a hook returns', () => {
  it('name at most ten of the unknown outputs a PLAN hook selects, each cut short, not all of them', async () => {
    // The message used to quote every id: 100,000 made-up ids made a result message of megabytes.
    const kit = hostileKit({ hooks: { PLAN: 'function plan() { const ids = ["x".repeat(1000)]; for (let i = 1; i < 100000; i++) ids.push("zz" + i); return { outputs: ids }; }' } });
    const result = await runtime.execute(kit, { tenantId: 't', input: { name: 'x' } });
    const named = ['x'.repeat(80) + '…', ...Array.from({ length: 9 }, (_, i) => `zz${i + 1}`)].map((id) => JSON.stringify(id)).join(', ');
    expect(result.error).toEqual({ code: 'PHASE_FAILED', phase: 'PLAN', message: `PLAN selected unknown outputs: ${named} and 99990 more` });
  });
});
