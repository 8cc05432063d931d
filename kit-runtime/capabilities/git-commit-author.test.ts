/**
 * The commit author a kit names goes into the commit's header as it is: isomorphic-git escapes
 * nothing, so a line break in it would write header lines of the kit's choosing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGitServer, type TestGitServer } from '../test-support/git-http-server.ts';
import { createGitCapabilities } from './git-commit.ts';

const TOKEN = 'tok_5b8e2a7d41';
let server: TestGitServer;
beforeAll(async () => {
  server = await startTestGitServer({ token: TOKEN });
});
afterAll(() => server.close());

/** A call whose phase never ends (the runtime aborts `signal` when it does). */
const call = { phase: 'APPLY' as const, tenantId: 't', kitRef: 'git-publish@1.0.0', signal: new AbortController().signal };
const refusal = (promise: unknown) => Promise.resolve(promise).then(() => '', (e: Error) => e.message);

describe('the author a kit names for its commit', () => {
  it('is refused with a line break, "<", ">" or other control characters in it, or over 200 characters, before anything is pushed', async () => {
    await server.createRepository('authored', { initialCommit: true });
    const before = await server.git('authored', 'rev-parse', 'main');
    const { gitCommit } = createGitCapabilities({
      openCredential: async () => ({ token: TOKEN, repository: server.url('authored') }),
      isAllowedRemote: (url) => url.hostname === '127.0.0.1',
    });
    const commit = (author: { name: string; email: string }) =>
      refusal(gitCommit.call({ repository: server.url('authored'), message: 'm', files: [{ path: 'a.md', content: 'a' }], credential: 'git-token', author }, call));
    const nameRule = 'author.name must be at most 200 characters, without "<", ">", line breaks or other control characters';
    const emailRule = nameRule.replace('author.name', 'author.email');
    // A second header line: the commit would claim a committer the kit made up.
    expect(await commit({ name: 'Kit\ncommitter Mallory <m@example.com> 0 +0000', email: 'k@example.com' })).toBe(nameRule);
    expect(await commit({ name: 'Kit', email: 'k@example.com> 0 +0000\ngpgsig x' })).toBe(emailRule);
    expect(await commit({ name: 'Kit <ceo@example.com>', email: 'k@example.com' })).toBe(nameRule);
    expect(await commit({ name: 'Kit\u0000', email: 'k@example.com' })).toBe(nameRule);
    expect(await commit({ name: 'K'.repeat(201), email: 'k@example.com' })).toBe(nameRule);
    expect(await server.git('authored', 'rev-parse', 'main')).toBe(before);

    expect(await commit({ name: 'Ada Lovelace', email: 'ada@example.com' })).toBe('');
    expect(await server.git('authored', 'log', '-1', '--format=%an|%ae|%cn', 'main')).toBe('Ada Lovelace|ada@example.com|Ada Lovelace');
  });
});
