import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostCapabilityError } from '../errors.ts';
import { startTestGitServer, type TestGitServer } from '../test-support/git-http-server.ts';
import { createGitCapabilities, isPublicHttpsRemote, isWithinRepository } from './git-commit.ts';
import { NonPublicAddressError, publicOnlyLookup } from './git-remote-policy.ts';

const TOKEN = 'tok_3f9a0c1d2e';
let server: TestGitServer;
beforeAll(async () => {
  server = await startTestGitServer({ token: TOKEN });
});
afterAll(() => server.close());

/** A call whose phase never ends (the runtime aborts `signal` when it does). */
const call = { phase: 'APPLY' as const, tenantId: 't', kitRef: 'git-publish@1.0.0', signal: new AbortController().signal };
/** The test server's origin: the credential may go to any repository on it. */
const everyRepository = () => new URL(server.url('x')).origin;
function capabilities(secret: Record<string, unknown> | null = { token: TOKEN, repository: everyRepository() }) {
  return createGitCapabilities({
    openCredential: async (id) => (id === 'git-token' ? secret : null),
    isAllowedRemote: (url) => url.hostname === '127.0.0.1',
  });
}
const files = [
  { path: 'README.md', content: '# Acme\n' },
  { path: 'api/openapi.yaml', content: 'openapi: 3.1.0\n' },
];
const refusal = (promise: unknown) => Promise.resolve(promise).then(() => '', (e: Error) => e.message);
const STOPPED = 'the git operation was stopped: its phase or run ended first';

/** Pushes a first commit made with the system git, so it can hold what no kit may write (symbolic links). */
async function pushCommitOf(name: string, build: (work: string) => Promise<void>): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'specwright-git-source-'));
  const git = (...args: string[]) => promisify(execFile)('git', ['-c', 'user.name=Seed', '-c', 'user.email=seed@test.invalid', ...args], { cwd: work });
  try {
    await git('init', '--quiet', '--initial-branch=main');
    await build(work);
    await git('add', '.');
    await git('commit', '--quiet', '-m', 'seed');
    await git('push', '--quiet', server.url(name).replace('http://', `http://kit:${TOKEN}@`), 'main');
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

describe('git capabilities over smart HTTP', () => {
  it('commits onto an existing branch, verifies, and commits nothing the second time', async () => {
    await server.createRepository('existing', { initialCommit: true });
    const seed = await server.git('existing', 'rev-parse', 'main');
    const { gitCommit, gitVerify } = capabilities();
    const argument = { repository: server.url('existing'), branch: 'main', directory: 'specwright', message: 'Publish Acme', files, credential: 'git-token' };
    const first = (await gitCommit.call(argument, call)) as { commit: string; parent: string; changed: boolean };
    expect(first).toMatchObject({ parent: seed, changed: true, branch: 'main', files: 2 });
    expect(await server.git('existing', 'rev-parse', 'main')).toBe(first.commit);
    expect(await server.git('existing', 'show', 'main:specwright/api/openapi.yaml')).toBe('openapi: 3.1.0');
    expect(await server.git('existing', 'show', 'main:README.md')).toBe('# seed');
    expect(await server.git('existing', 'log', '-1', '--format=%s|%an', 'main')).toBe('Publish Acme|Specwright');

    const again = (await gitCommit.call(argument, call)) as { commit: string; changed: boolean };
    expect(again).toMatchObject({ commit: first.commit, changed: false });

    const verified = await gitVerify.call({ repository: server.url('existing'), directory: 'specwright', commit: first.commit, files, credential: 'git-token' }, { ...call, phase: 'VERIFY' });
    expect(verified).toEqual({ onBranch: true, head: first.commit, missing: [], different: [] });
    const changed = await gitVerify.call(
      { repository: server.url('existing'), directory: 'specwright', commit: first.commit, files: [{ path: 'README.md', content: 'other' }, { path: 'nope.txt', content: '' }], credential: 'git-token' },
      { ...call, phase: 'VERIFY' },
    );
    expect(changed).toMatchObject({ onBranch: true, different: ['specwright/README.md'], missing: ['specwright/nope.txt'] });
    const unknown = await gitVerify.call({ repository: server.url('existing'), commit: 'a'.repeat(40), credential: 'git-token' }, { ...call, phase: 'VERIFY' });
    expect(unknown).toMatchObject({ onBranch: false, head: first.commit });
  });

  it('takes a directory written as a folder: "docs/" and "./docs" are docs, "." and "./" the root', async () => {
    await server.createRepository('folders', { initialCommit: true });
    const { gitCommit } = capabilities();
    const commit = (directory: string, content: string) =>
      gitCommit.call({ repository: server.url('folders'), branch: 'main', directory, message: `into ${directory}`, files: [{ path: 'spec.md', content }], credential: 'git-token' }, call);
    expect(await commit('docs/', 'one')).toMatchObject({ changed: true });
    expect(await server.git('folders', 'show', 'main:docs/spec.md')).toBe('one');
    expect(await commit('./docs', 'one')).toMatchObject({ changed: false });
    expect(await commit('.', 'root')).toMatchObject({ changed: true });
    expect(await server.git('folders', 'show', 'main:spec.md')).toBe('root');
    expect(await commit('./', 'root')).toMatchObject({ changed: false });
    // Still inside the repository only, with the path rule's own words.
    expect(await refusal(commit('/', 'x'))).toBe('directory must be relative, not absolute');
    expect(await refusal(commit('../docs/', 'x'))).toBe('directory must not contain ".." segments');
    expect(await refusal(commit('.git/', 'x'))).toBe('directory must not be .git or lie inside it');
  });

  it('starts a branch in an empty repository, with Bearer auth too', async () => {
    await server.createRepository('empty');
    const { gitCommit } = createGitCapabilities({ openCredential: async () => ({ token: TOKEN, scheme: 'bearer', repository: server.url('empty') }), isAllowedRemote: () => true });
    const result = (await gitCommit.call({ repository: server.url('empty'), branch: 'specwright/output', message: 'first', files, credential: 'git-token' }, call)) as { commit: string; parent: null };
    expect(result.parent).toBeNull();
    expect(await server.git('empty', 'rev-parse', 'specwright/output')).toBe(result.commit);
    expect(await server.git('empty', 'ls-tree', '-r', '--name-only', 'specwright/output')).toBe('README.md\napi/openapi.yaml');
  });

  it('fails with a clear error that never contains the token when the token is wrong', async () => {
    await server.createRepository('guarded', { initialCommit: true });
    const before = await server.git('guarded', 'rev-parse', 'main');
    const wrong = 'wrong-token-7c1e55';
    const { gitCommit } = capabilities({ token: wrong, repository: server.url('guarded') });
    const error = await Promise.resolve(gitCommit.call({ repository: server.url('guarded'), message: 'm', files, credential: 'git-token' }, call)).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(HostCapabilityError);
    expect((error as Error).message).toBe(`the git server at ${new URL(server.url('guarded')).origin} refused credential "git-token" (HTTP 401)`);
    expect((error as Error).message).not.toContain(wrong);
    expect(await server.git('guarded', 'rev-parse', 'main')).toBe(before);
  });

  it('scrubs the token from what a server answers, whatever the scheme, since a hostOnly credential is not the run redactor\'s to catch', async () => {
    // A server that sends the credentials it got back in place of its ref advertisement: the kit
    // sees isomorphic-git's ParseError quoting that line, and a hostOnly token is in nobody else's list.
    const echoing = createServer((req, res) => {
      const header = req.headers.authorization ?? '';
      const sent = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : header;
      const service = new URL(req.url ?? '/', 'http://x').searchParams.get('service') ?? 'git-upload-pack';
      const line = `refused ${sent}\n`;
      res.writeHead(200, { 'content-type': `application/x-${service}-advertisement` }).end(`${(line.length + 4).toString(16).padStart(4, '0')}${line}0000`);
    });
    await new Promise<void>((resolve) => echoing.listen(0, '127.0.0.1', resolve));
    try {
      const repository = `http://127.0.0.1:${(echoing.address() as { port: number }).port}/acme/spec.git`;
      for (const scheme of ['basic', 'bearer']) {
        const refused = await refusal(capabilities({ token: TOKEN, repository, scheme }).gitCommit.call({ repository, message: 'm', files, credential: 'git-token' }, call));
        expect(refused).toMatch(/^git operation failed: Expected "# service=git-upload-pack\\n" but received "refused /);
        expect(refused).not.toContain(TOKEN);
      }
    } finally {
      await new Promise((resolve) => echoing.close(resolve));
    }
  });

  it('refuses a branch head that is not a commit id, so nothing the server wrote there reaches the hook', async () => {
    const advertising = createServer((req, res) => {
      const sent = Buffer.from((req.headers.authorization ?? '').slice(6), 'base64').toString('utf8');
      const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' })
        .end(`${pkt('# service=git-upload-pack\n')}0000${pkt(`${sent} refs/heads/main\0side-band-64k\n`)}0000`);
    });
    await new Promise<void>((resolve) => advertising.listen(0, '127.0.0.1', resolve));
    try {
      const repository = `http://127.0.0.1:${(advertising.address() as { port: number }).port}/acme/spec.git`;
      const { gitCommit, gitVerify } = capabilities({ token: TOKEN, repository });
      const origin = new URL(repository).origin;
      // One after the other: both started at once, the second could reject before the loop awaited
      // it, an unhandled rejection that failed the run (it did once, in a full run).
      for (const attempt of [
        () => gitVerify.call({ repository, branch: 'main', commit: 'a'.repeat(40), credential: 'git-token' }, { ...call, phase: 'VERIFY' as const }),
        () => gitCommit.call({ repository, message: 'm', files, credential: 'git-token' }, call),
      ]) {
        expect(await refusal(attempt())).toBe(`the git server at ${origin} advertised main at something that is not a commit id`);
      }
    } finally {
      await new Promise((resolve) => advertising.close(resolve));
    }
  });

  it('refuses remotes off the allow-list, URLs with credentials, unsafe paths and a missing credential', async () => {
    const { gitCommit } = capabilities();
    const refuse = (argument: Record<string, unknown>) => refusal(gitCommit.call({ message: 'm', files, credential: 'git-token', ...argument }, call));
    expect(await refuse({ repository: 'http://10.0.0.1/x.git' })).toBe('repository http://10.0.0.1 is not an allowed git remote');
    expect(await refuse({ repository: `http://u:${TOKEN}@127.0.0.1/x.git` })).toMatch(/must not contain credentials/);
    expect(await refuse({ repository: 'file:///etc' })).toBe('repository must be an http(s) URL');
    expect(await refuse({ repository: server.url('existing'), files: [{ path: '../x', content: '' }] })).toMatch(/^files\[0\]\.path /);
    expect(await refuse({ repository: server.url('existing'), files: [{ path: 'a/.git/config', content: '' }] })).toMatch(/inside .git/);
    expect(await refuse({ repository: server.url('existing'), credential: 'other' })).toBe('credential "other" is not configured or has no token');
    const defaults = createGitCapabilities();
    expect(await refusal(defaults.gitCommit.call({ repository: server.url('existing'), message: 'm', files }, call))).toMatch(/not an allowed git remote/);
  });

  it('refuses each branch name git refuses, saying why, before any request', async () => {
    await server.createRepository('branches', { initialCommit: true });
    const opened: string[] = [];
    const { gitCommit } = createGitCapabilities({
      openCredential: async (id) => (opened.push(id), { token: TOKEN, repository: everyRepository() }),
      isAllowedRemote: (url) => url.hostname === '127.0.0.1',
    });
    const requestsBefore = server.requests.length;
    const refused: Array<[string, string]> = [
      ['main.lock', 'no part may start with "." or end with ".lock" ("main.lock")'],
      ['feat/x.lock/y', 'no part may start with "." or end with ".lock" ("x.lock")'],
      ['.hidden', 'no part may start with "." or end with ".lock" (".hidden")'],
      ['feat/.x', 'no part may start with "." or end with ".lock" (".x")'],
      ['HEAD', 'it cannot be "HEAD"'],
      ['-x', 'it cannot start with "-"'],
      ['a//b', 'it cannot start or end with "/" or contain "//"'],
      ['a/', 'it cannot start or end with "/" or contain "//"'],
      ['a..b', 'it cannot contain ".."'],
      ['a.', 'it cannot end with "."'],
      ['a@{1}', 'use 1 to 200 letters, digits, ".", "_", "/" and "-"'],
      ['', 'use 1 to 200 letters, digits, ".", "_", "/" and "-"'],
    ];
    for (const [branch, problem] of refused) {
      const message = await refusal(gitCommit.call({ repository: server.url('branches'), branch, message: 'm', files, credential: 'git-token' }, call));
      expect([branch, message]).toEqual([branch, `branch ${JSON.stringify(branch)} is not a valid branch name: ${problem}`]);
    }
    expect(opened).toEqual([]);
    expect(server.requests.length).toBe(requestsBefore);
    expect(await server.git('branches', 'for-each-ref', '--format=%(refname)', 'refs/heads')).toBe('refs/heads/main');
  });

  it('never writes through a symbolic link the repository holds, and pushes nothing then', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'specwright-outside-'));
    try {
      await server.createRepository('linked');
      await pushCommitOf('linked', async (work) => {
        await writeFile(join(work, 'README.md'), '# linked\n');
        await symlink(outside, join(work, 'docs'));
        await symlink(join(outside, 'notes.md'), join(work, 'notes.md'));
      });
      const before = await server.git('linked', 'rev-parse', 'main');
      const { gitCommit } = capabilities();
      const attempt = (argument: Record<string, unknown>) => refusal(gitCommit.call({ repository: server.url('linked'), message: 'm', credential: 'git-token', ...argument }, call));
      const keys = { path: 'authorized_keys', content: 'ssh-ed25519 AAAA attacker\n' };
      expect(await attempt({ files: [{ path: 'README.md', content: '# changed\n' }, { ...keys, path: 'docs/authorized_keys' }] })).toBe(
        'cannot write "docs/authorized_keys": "docs" is a symbolic link in the repository, and gitCommit never writes through one',
      );
      expect(await attempt({ directory: 'docs/ssh', files: [keys] })).toBe('cannot write "docs/ssh/authorized_keys": "docs" is a symbolic link in the repository, and gitCommit never writes through one');
      expect(await attempt({ files: [{ path: 'notes.md', content: 'x' }] })).toBe('cannot write "notes.md": "notes.md" is a symbolic link in the repository, and gitCommit never writes through one');
      expect(await readdir(outside)).toEqual([]);
      expect(await server.git('linked', 'rev-parse', 'main')).toBe(before);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('refuses .git anywhere in directory and path, in every spelling a file system reads as .git, before any request', async () => {
    await server.createRepository('dotgit', { initialCommit: true });
    const seen: string[] = [];
    const elsewhere = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      // Replacing the clone's .git/config would send the push, and the credential, to this server.
      const config = `[remote "origin"]\n\turl = http://127.0.0.1:${(elsewhere.address() as { port: number }).port}/loot.git\n`;
      const { gitCommit } = capabilities();
      const requestsBefore = server.requests.length;
      const attempt = (directory: string, path: string) =>
        refusal(gitCommit.call({ repository: server.url('dotgit'), branch: 'brand-new', directory, message: 'm', files: [{ path, content: config }], credential: 'git-token' }, call));
      for (const directory of ['.git', '.GIT', 'specs/.Git', '.g\u200Cit', 'git~1']) {
        expect(await attempt(directory, 'config'), directory).toBe('directory must not be .git or lie inside it');
      }
      expect(await attempt('.git.', 'config')).toBe('directory must not have a segment ending in "." or " "');
      for (const path of ['.GIT/config', 'x/.git\u200D/config', 'GIT~1/config']) {
        expect(await attempt('specs', path), path).toBe('files[0].path must not be inside .git');
      }
      expect(seen).toEqual([]);
      expect(server.requests.length).toBe(requestsBefore);
      expect(await server.git('dotgit', 'branch', '--list', 'brand-new')).toBe('');
    } finally {
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });

  it('starts nothing once its signal has aborted, not even opening the credential', async () => {
    await server.createRepository('stopped', { initialCommit: true });
    const opened: string[] = [];
    const { gitCommit, gitVerify } = createGitCapabilities({
      openCredential: async (id) => (opened.push(id), { token: TOKEN, repository: everyRepository() }),
      isAllowedRemote: (url) => url.hostname === '127.0.0.1',
    });
    const requestsBefore = server.requests.length;
    const over = { ...call, signal: AbortSignal.abort() };
    const repository = server.url('stopped');
    expect(await refusal(gitCommit.call({ repository, message: 'm', files, credential: 'git-token' }, over))).toBe(STOPPED);
    expect(await refusal(gitVerify.call({ repository, commit: 'a'.repeat(40), credential: 'git-token' }, { ...over, phase: 'VERIFY' }))).toBe(STOPPED);
    expect(opened).toEqual([]);
    expect(server.requests.length).toBe(requestsBefore);
  });

  it.each([
    ['the branch head', 'held-head', 'gitCommit', 'GET', '/info/refs?service=git-upload-pack'],
    ['the clone', 'held-clone', 'gitCommit', 'POST', '/git-upload-pack'],
    ["the push's first request", 'held-push', 'gitCommit', 'GET', '/info/refs?service=git-receive-pack'],
    ["verify's clone", 'held-verify', 'gitVerify', 'POST', '/git-upload-pack'],
  ] as const)('stops at once when its signal aborts while the server holds %s, and pushes nothing once the server answers', async (_point, repository, name, method, suffix) => {
    await server.createRepository(repository, { initialCommit: true });
    const before = await server.git(repository, 'rev-parse', 'main');
    const capability = capabilities()[name];
    const held = server.holdNext((request) => request.method === method && request.path === `/${repository}.git${suffix}`);
    const phase = new AbortController();
    const argument = { repository: server.url(repository), message: 'm', files, credential: 'git-token', commit: before };
    const calling = refusal(capability.call(argument, { ...call, phase: name === 'gitCommit' ? 'APPLY' : 'VERIFY', signal: phase.signal }));
    try {
      await held.reached;
      phase.abort();
      // Answered while the server still holds the request: the request was given up, not awaited.
      expect(await calling).toBe(STOPPED);
    } finally {
      held.release();
    }
    expect(server.requests.filter((request) => request.path === `/${repository}.git/git-receive-pack`)).toEqual([]);
    expect(await server.git(repository, 'rev-parse', 'main')).toBe(before);
  });

  it('reports a path that needs a file to be a folder, or the reverse, as such and not as an unreachable server', async () => {
    await server.createRepository('clash', { initialCommit: true });
    const { gitCommit } = capabilities();
    const attempt = (argument: Record<string, unknown>) => refusal(gitCommit.call({ repository: server.url('clash'), message: 'm', credential: 'git-token', ...argument }, call));
    await gitCommit.call({ repository: server.url('clash'), message: 'api', files: [{ path: 'api/openapi.yaml', content: 'openapi: 3.1.0\n' }], credential: 'git-token' }, call);
    const before = await server.git('clash', 'rev-parse', 'main');
    const clash = 'files "a" and "a/b.md" clash: "a" cannot be both a file and a folder';
    expect(await attempt({ files: [{ path: 'a', content: 'x' }, { path: 'a/b.md', content: 'y' }] })).toBe(clash);
    expect(await attempt({ files: [{ path: 'a/b.md', content: 'y' }, { path: 'a', content: 'x' }] })).toBe(clash);
    expect(await attempt({ files: [{ path: 'README.md/x.md', content: 'y' }] })).toBe('cannot write "README.md/x.md": "README.md" is a file in the repository, not a folder');
    expect(await attempt({ files: [{ path: 'api', content: 'y' }] })).toBe('cannot write "api": it is a folder in the repository');
    expect(await server.git('clash', 'rev-parse', 'main')).toBe(before);

    // Only a failure to connect says the server cannot be reached.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    expect(await refusal(gitCommit.call({ repository: `http://127.0.0.1:${port}/x.git`, message: 'm', files }, call))).toBe(`cannot reach the git server at http://127.0.0.1:${port} (ECONNREFUSED)`);
  });

  it('by default reaches only https remotes that are not the worker\'s own host or a network that is not public', async () => {
    const { gitCommit } = createGitCapabilities();
    for (const repository of [
      'https://127.0.0.1/x.git',
      'https://127.8.9.10:8443/x.git',
      'https://localhost/x.git',
      'https://git.localhost/x.git',
      'https://169.254.169.254/latest/meta-data',
      'https://10.1.2.3/x.git',
      'https://172.16.0.1/x.git',
      'https://192.168.1.1/x.git',
      'https://100.64.0.1/x.git',
      'https://0.0.0.0/x.git',
      'https://[::1]/x.git',
      'https://[fe80::1]/x.git',
      'https://[fd00::1]/x.git',
      'https://[::ffff:127.0.0.1]/x.git',
      'https://2130706433/x.git',
      'http://example.com/x.git',
      'https://localhost./x.git',
      'https://git.localhost../x.git',
      'https://[::127.0.0.1]/x.git',
      'https://[64:ff9b::a9fe:a9fe]/x.git',
      'https://[2002:a9fe:a9fe::]/x.git',
      'https://[fec0::1]/x.git',
    ]) {
      const refused = await refusal(gitCommit.call({ repository, message: 'm', files }, call));
      expect(refused, repository).toMatch(/is not an allowed git remote$/);
    }
    for (const repository of ['https://github.com/acme/specs.git', 'https://8.8.8.8/x.git', 'https://[2001:4860::8888]/x.git', 'https://172.32.0.1/x.git']) {
      expect(isPublicHttpsRemote(new URL(repository)), repository).toBe(true);
    }
  });

  it('follows no redirect, which would lead past the remote policy', async () => {
    let reached = 0;
    const elsewhere = createServer((_req, res) => {
      reached += 1;
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(elsewhere.address() as { port: number }).port}/latest/meta-data`;
    const redirecting = createServer((_req, res) => void res.writeHead(302, { location: target }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const allowedPort = String((redirecting.address() as { port: number }).port);
    try {
      const { gitCommit } = createGitCapabilities({ isAllowedRemote: (url) => url.port === allowedPort });
      const refused = await refusal(gitCommit.call({ repository: `http://127.0.0.1:${allowedPort}/x.git`, message: 'm', files }, call));
      expect(refused).toBe(`the git server at http://127.0.0.1:${allowedPort} answered HTTP 302 (redirects are not followed)`);
      expect(reached).toBe(0);
    } finally {
      elsewhere.close();
      redirecting.close();
    }
  });

  it('under the default policy, refuses a name that resolves to an address that is not public, as the connection is made', async () => {
    const resolved = (hostname: string, all: boolean) =>
      new Promise<unknown>((resolve) => publicOnlyLookup(hostname, { all }, (error, address) => resolve(error ?? address)));
    for (const all of [false, true]) {
      const refused = await resolved('localhost', all);
      expect(refused).toBeInstanceOf(NonPublicAddressError);
      expect((refused as Error).message).toBe('localhost resolves to an address that is not public');
    }
    // A public literal passes the lookup untouched.
    expect(await resolved('8.8.8.8', false)).toBe('8.8.8.8');
  });

  it('sends a credential only to the repository it was stored for', async () => {
    // Whoever runs the kit chooses the URL: a server of theirs must never see the token.
    const seen: IncomingHttpHeaders[] = [];
    const elsewhere = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(401, { 'www-authenticate': 'Basic' }).end();
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = elsewhere.address() as { port: number };
      const attempt = (secret: Record<string, unknown>, repository: string) =>
        refusal(capabilities(secret).gitCommit.call({ repository, message: 'm', files, credential: 'git-token' }, call));
      const boundToExisting = { token: TOKEN, repository: server.url('existing') };
      expect(await attempt(boundToExisting, `http://127.0.0.1:${port}/existing.git`)).toBe(
        `credential "git-token" may not be sent to http://127.0.0.1:${port}/existing.git: it is bound to another repository`,
      );
      expect(await attempt(boundToExisting, server.url('guarded'))).toMatch(/bound to another repository/);
      expect(await attempt({ token: TOKEN }, `http://127.0.0.1:${port}/x.git`)).toBe('credential "git-token" names no repository it may be sent to (store it with "repository")');
      expect(seen).toEqual([]);
    } finally {
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });

  it.each([
    ['https://git.example.com/acme/app.git', 'https://git.example.com/acme/app', true],
    ['https://git.example.com/acme/app', 'https://git.example.com/acme/app.git/', true],
    ['https://git.example.com/acme/app.git', 'https://git.example.com/acme', true],
    ['https://git.example.com/acme/app.git', 'https://git.example.com', true],
    ['https://git.example.com/acme-evil/app.git', 'https://git.example.com/acme', false],
    ['https://git.example.com/other/app.git', 'https://git.example.com/acme/app.git', false],
    ['https://git.example.com.evil.test/acme/app.git', 'https://git.example.com/acme/app.git', false],
    ['http://git.example.com/acme/app.git', 'https://git.example.com/acme/app.git', false],
    ['https://git.example.com:8443/acme/app.git', 'https://git.example.com/acme/app.git', false],
    ['https://git.example.com/acme%2F..%2Fother/app.git', 'https://git.example.com/acme/app.git', false],
    ['https://git.example.com/acme/app.git', 'not a url', false],
  ])('%s is within %s: %s', (url, bound, expected) => {
    expect(isWithinRepository(new URL(url), bound)).toBe(expected);
  });
});
