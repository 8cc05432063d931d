import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestRuntime, createGitCapabilities, runKitForTest, startTestGitServer, type TestGitServer } from '../../sdk/kit/index.ts';

const kitDir = import.meta.dirname;
const TOKEN = 'ghp_test_5b9e2f7a41';
const example = JSON.parse(await readFile(`${kitDir}/examples/acme-rockets.json`, 'utf8'));
let server: TestGitServer;

beforeAll(async () => {
  server = await startTestGitServer({ token: TOKEN });
});
afterAll(async () => {
  await server.close();
  closeTestRuntime();
});

/** The run the server would make: the stored token opened by id, the git capabilities lent for APPLY/VERIFY. */
function publish(repository: string, options: { token?: string | null; dryRun?: boolean; skipApply?: boolean } = {}) {
  const input = structuredClone(example);
  input.discoveryAnswers.repository = { url: server.url(repository), branch: 'main', directory: 'specwright' };
  const token = options.token === undefined ? TOKEN : options.token;
  const credentials: Record<string, Record<string, unknown>> = token === null ? {} : { 'git-token': { token, repository: server.url(repository) } };
  const capabilities = createGitCapabilities({ openCredential: async (id) => credentials[id] ?? null, isAllowedRemote: (url) => url.hostname === '127.0.0.1' });
  return runKitForTest(kitDir, input, { credentials, capabilities, ...(options.dryRun ? { dryRun: true } : {}), ...(options.skipApply ? { skipApply: true } : {}) });
}

describe('git-publish kit', () => {
  it('APPLY commits the rendered files to the repository over HTTP with the stored token; VERIFY finds them', async () => {
    await server.createRepository('spec', { initialCommit: true });
    const seed = await server.git('spec', 'rev-parse', 'main');
    const result = await publish('spec');
    expect(result.status).toBe('completed');
    expect(result.phases.map((p) => `${p.phase}:${p.status}`)).toEqual([
      'CHECK:completed', 'PLAN:completed', 'RENDER:completed', 'VALIDATE:completed', 'APPLY:completed', 'VERIFY:completed',
    ]);
    const applied = result.applyResult as { commit: string; parent: string; changed: boolean; files: string[] };
    // The credential is hostOnly: the hooks never hold it, so nothing they report is blanked for it
    // (its `repository` is this URL too).
    expect(applied).toEqual({ repository: server.url('spec'), branch: 'main', commit: expect.stringMatching(/^[0-9a-f]{40}$/), parent: seed, changed: true, files: ['project.json', 'README.md'] });
    expect(await server.git('spec', 'rev-parse', 'main')).toBe(applied.commit);
    expect(await server.git('spec', 'ls-tree', '-r', '--name-only', 'main')).toBe('README.md\nspecwright/README.md\nspecwright/project.json');
    expect(JSON.parse(await server.git('spec', 'show', 'main:specwright/project.json'))).toEqual(result.parsed('project'));
    expect(await server.git('spec', 'log', '-1', '--format=%s', 'main')).toBe('Specwright: Acme Rockets specification (git-publish 1.2.2)');
    expect(result.verifyWarnings).toEqual([]);
    expect(result.logs.map((l) => l.message)).toEqual([`committed ${applied.commit} to main`]);

    // Jobs may run twice: the second APPLY finds the files in place and adds no commit.
    const again = await publish('spec');
    expect(again.applyResult).toMatchObject({ commit: applied.commit, changed: false });
    expect(await server.git('spec', 'rev-list', '--count', 'main')).toBe('2');
  });

  it('changes nothing in the target on dryRun or skipApply (no request reaches the git server)', async () => {
    await server.createRepository('untouched', { initialCommit: true });
    const before = await server.git('untouched', 'rev-parse', 'main');
    const requestsBefore = server.requests.length;
    for (const options of [{ dryRun: true }, { skipApply: true }]) {
      const result = await publish('untouched', options);
      expect(result.status).toBe('completed');
      expect(result.phases.find((p) => p.phase === 'APPLY')).toMatchObject({ status: 'skipped', detail: options.dryRun ? 'dry run' : 'skipApply requested' });
      expect(result.applyResult).toBeNull();
      expect(result.verifyWarnings).toEqual([options.dryRun ? 'nothing to verify: dry run' : 'nothing to verify: skipApply']);
    }
    expect(server.requests.length).toBe(requestsBefore);
    expect(await server.git('untouched', 'rev-parse', 'main')).toBe(before);
    expect(await server.git('untouched', 'rev-list', '--count', '--all')).toBe('1');
  });

  it('fails APPLY with a clear error that does not contain the token when the token is wrong', async () => {
    await server.createRepository('guarded', { initialCommit: true });
    const before = await server.git('guarded', 'rev-parse', 'main');
    const wrong = 'ghp_wrong_0c4d19e8';
    const result = await publish('guarded', { token: wrong });
    expect(result.status).toBe('failed');
    expect(result.message).toBe(`APPLY: APPLY hook (hooks/apply.js) failed: the git server at ${new URL(server.url('guarded')).origin} refused credential "git-token" (HTTP 401)`);
    expect(JSON.stringify(result)).not.toContain(wrong);
    expect(await server.git('guarded', 'rev-parse', 'main')).toBe(before);
  });

  it('fails APPLY when the credential is not configured, before any network call', async () => {
    await server.createRepository('nocred');
    const requestsBefore = server.requests.length;
    const result = await publish('nocred', { token: null });
    expect(result.message).toBe('APPLY: required credential "git-token" is not configured');
    expect(server.requests.length).toBe(requestsBefore);
  });

  it('fails CHECK listing every missing input', async () => {
    const result = await runKitForTest(kitDir, { businessProfile: { company: {} }, discoveryAnswers: {} });
    expect(result.message).toBe('CHECK: missing required inputs: businessProfile.company.name, discoveryAnswers.repository.url');
    const bad = await runKitForTest(kitDir, { businessProfile: { company: { name: 'A' } }, discoveryAnswers: { repository: { url: 'https://user:pw@host/x.git' } } });
    expect(bad.message).toBe('CHECK: CHECK failed: discoveryAnswers.repository.url must be an http(s) URL without credentials');
    for (const url of ['https://git.example/x.git?private_token=glpat-secret', 'https://git.example/x.git#glpat-secret']) {
      const inQuery = await runKitForTest(kitDir, { businessProfile: { company: { name: 'A' } }, discoveryAnswers: { repository: { url } } }, { dryRun: true });
      expect(inQuery.message).toBe("CHECK: CHECK failed: discoveryAnswers.repository.url must not carry a query or fragment: a token goes in the kit's credential");
    }
  });

  it('fails CHECK, already in a dry run, for branch names git refuses and for a directory that is .git in any spelling or lies outside the repository', async () => {
    const checked = (repository: Record<string, unknown>) =>
      runKitForTest(kitDir, { businessProfile: { company: { name: 'A' } }, discoveryAnswers: { repository: { url: 'https://git.example/a.git', ...repository } } }, { dryRun: true });
    const refused: Array<[string, string]> = [
      ['main.lock', 'no part may start with "." or end with ".lock" ("main.lock")'],
      ['feat/x.lock/y', 'no part may start with "." or end with ".lock" ("x.lock")'],
      ['a//b', 'it cannot start or end with "/" or contain "//"'],
      ['/a', 'it cannot start or end with "/" or contain "//"'],
      ['a/', 'it cannot start or end with "/" or contain "//"'],
      ['.hidden', 'no part may start with "." or end with ".lock" (".hidden")'],
      ['feat/.x', 'no part may start with "." or end with ".lock" (".x")'],
      ['HEAD', 'it cannot be "HEAD"'],
      ['@', 'it cannot be "@"'],
      ['a..b', 'it cannot contain ".."'],
      ['-x', 'it cannot start with "-"'],
      ['a.', 'it cannot end with "."'],
      ['a b', 'use 1 to 200 letters, digits, ".", "_", "/" and "-"'],
      ['a@{1}', 'use 1 to 200 letters, digits, ".", "_", "/" and "-"'],
      ['', 'use 1 to 200 letters, digits, ".", "_", "/" and "-"'],
    ];
    for (const [branch, problem] of refused) {
      const run = await checked({ branch });
      expect([branch, run.status, run.message]).toEqual([branch, 'failed', `CHECK: CHECK failed: discoveryAnswers.repository.branch is not a valid branch name: ${problem}`]);
    }
    for (const directory of ['.git', '.GIT', 'docs/.git', '.git./x', 'git~1', '.g\u200Cit']) {
      const run = await checked({ directory });
      expect([directory, run.message]).toEqual([directory, 'CHECK: CHECK failed: discoveryAnswers.repository.directory must not be .git or lie inside it']);
    }
    // APPLY's gitCommit refuses these too (explainUnsafePath); the dry run must not pass them.
    for (const [directory, problem] of [
      ['../outside', 'must not contain ".." segments'],
      ['specs/../../outside', 'must not contain ".." segments'],
      ['/abs', 'must be relative, not absolute'],
      ['C:/specs', 'must be relative, not a drive path'],
      ['specs\\..\\..', 'must use "/" as separator, not "\\"'],
    ]) {
      const run = await checked({ directory });
      expect([directory, run.status, run.message]).toEqual([directory, 'failed', `CHECK: CHECK failed: discoveryAnswers.repository.directory ${problem}`]);
    }
    for (const repository of [{ branch: 'feature/login-2.0_final', directory: 'specs/.github-like/git' }, { branch: 'release/v1.2', directory: '.gitlab' }, { directory: 'a..b/..c' }]) {
      expect((await checked(repository)).status).toBe('completed');
    }
  });

  it('keeps a company name with line breaks on one line: the commit message is one subject, the README one heading', async () => {
    await server.createRepository('multiline', { initialCommit: true });
    const input = structuredClone(example);
    input.businessProfile.company.name = 'Acme\n\nCo-authored-by: Mallory <m@example.com>\r\n---\u2028Rockets';
    input.discoveryAnswers.entities = ['Rocket\n# Launch', { name: 'Pad' }];
    input.discoveryAnswers.repository = { url: server.url('multiline'), branch: 'main' };
    const credentials = { 'git-token': { token: TOKEN, repository: server.url('multiline') } };
    const capabilities = createGitCapabilities({ openCredential: async (id) => (credentials as Record<string, unknown>)[id] as never ?? null, isAllowedRemote: (url) => url.hostname === '127.0.0.1' });
    const result = await runKitForTest(kitDir, input, { credentials, capabilities });
    expect(result.status).toBe('completed');
    const subject = 'Specwright: Acme Co-authored-by: Mallory <m@example.com> --- Rockets specification (git-publish 1.2.2)';
    expect(await server.git('multiline', 'log', '-1', '--format=%B', 'main')).toBe(subject);
    const readme = result.output('readme').content.split('\n');
    expect(readme[0]).toBe('# Acme Co-authored-by: Mallory <m@example.com> --- Rockets — specification snapshot');
    expect(readme[1]).toBe('');
    expect(readme[4]).toBe('Rocket # Launch, Pad.');
    // project.json keeps the data as given.
    expect(result.parsed('project')).toMatchObject({ company: { name: input.businessProfile.company.name }, entities: ['Rocket\n# Launch', 'Pad'] });
  });

  it('publishes to the folder a directory written with a trailing "/" or "./" names, and to the root for "." — as its dry run promised', async () => {
    for (const [name, directory, tree] of [
      ['trailing-slash', 'specs/', 'README.md\nspecs/README.md\nspecs/project.json'],
      ['dot-slash', './specs/v1/', 'README.md\nspecs/v1/README.md\nspecs/v1/project.json'],
      ['dot', '.', 'README.md\nproject.json'],
    ] as const) {
      await server.createRepository(name, { initialCommit: true });
      const input = structuredClone(example);
      input.discoveryAnswers.repository = { url: server.url(name), directory };
      const credentials = { 'git-token': { token: TOKEN, repository: server.url(name) } };
      const capabilities = createGitCapabilities({ openCredential: async (id) => (credentials as Record<string, Record<string, unknown>>)[id] ?? null, isAllowedRemote: (url) => url.hostname === '127.0.0.1' });
      expect((await runKitForTest(kitDir, input, { dryRun: true })).status).toBe('completed');
      const result = await runKitForTest(kitDir, input, { credentials, capabilities });
      expect([directory, result.status, result.message]).toEqual([directory, 'completed', null]);
      expect(result.verifyWarnings).toEqual([]);
      expect(await server.git(name, 'ls-tree', '-r', '--name-only', 'main')).toBe(tree);
    }
  });

  it('fails CHECK, already in a dry run, for a directory APPLY would refuse, with the message APPLY would give', async () => {
    const checked = (directory: string) =>
      runKitForTest(kitDir, { businessProfile: { company: { name: 'A' } }, discoveryAnswers: { repository: { url: 'https://git.example/a.git', directory } } }, { dryRun: true });
    for (const [directory, problem] of [
      ['specs/CON', 'must not use the reserved device name "CON"'],
      ['lpt1.txt', 'must not use the reserved device name "lpt1.txt"'],
      ['specs ', 'must not have a segment ending in "." or " "'],
      ['specs./v1', 'must not have a segment ending in "." or " "'],
      ['...', 'must not contain dot-only segments'],
      ['specs:v1', 'must not contain any of : * ? " < > |'],
      ['spec\u0000s', 'must not contain NUL or other control characters'],
      ['spec\u202Es', 'must not contain Unicode bidirectional controls (such as U+202E)'],
      ['spec\u200Bs', 'must not contain invisible characters (such as U+200B) or line separators'],
      ['spec\uD800s', 'must not contain unpaired UTF-16 surrogates'],
      ['\u00e9'.repeat(128), 'segments must be at most 255 bytes in UTF-8'],
      ['a/'.repeat(513), 'must be at most 1024 characters'],
    ] as Array<[string, string]>) {
      const run = await checked(directory);
      expect([directory, run.status, run.message]).toEqual([directory, 'failed', `CHECK: CHECK failed: discoveryAnswers.repository.directory ${problem}`]);
    }
    for (const directory of ['\u00e9'.repeat(127), 'specs/v1.2/\u0646\u0627\u200C\u0645\u0647', 'console', 'docs/aux-notes']) {
      expect([directory, (await checked(directory)).status]).toEqual([directory, 'completed']);
    }
  });

  it('fails CHECK for a branch that is not text, rather than publishing to main or to its text', async () => {
    for (const [branch, kind] of [[0, 'a number'], [false, 'a boolean'], [['release'], 'a list'], [{ name: 'x' }, 'an object']] as const) {
      const run = await runKitForTest(kitDir, { businessProfile: { company: { name: 'A' } }, discoveryAnswers: { repository: { url: 'https://git.example/a.git', branch } } }, { dryRun: true });
      expect([branch, run.status, run.message]).toEqual([branch, 'failed', `CHECK: CHECK failed: discoveryAnswers.repository.branch must be text, not ${kind}`]);
    }
    const unset = await runKitForTest(kitDir, { businessProfile: { company: { name: 'A' } }, discoveryAnswers: { repository: { url: 'https://git.example/a.git', branch: null } } }, { dryRun: true });
    expect([unset.status, unset.parsed('project')]).toMatchObject(['completed', { discoveryAnswers: { repository: { branch: null } } }]);
    expect(unset.output('readme').content).toContain('one commit on `main`');
  });

  it('takes a repository URL whose scheme is in capitals, and refuses a description that is not text at CHECK', async () => {
    const run = (url: string, description: unknown) =>
      runKitForTest(kitDir, { businessProfile: { company: { name: 'A' }, description }, discoveryAnswers: { repository: { url } } }, { dryRun: true });
    expect((await run('HTTPS://git.example/a.git', 'Rockets')).status).toBe('completed');
    const described = await run('https://git.example/a.git', { long: 'Rockets' });
    expect([described.status, described.message]).toEqual(['failed', 'CHECK: CHECK failed: businessProfile.description must be text, not an object']);
  });

  it('fails CHECK, naming the input, for a company name that is not text and an entity without a name', async () => {
    const run = await runKitForTest(kitDir, {
      businessProfile: { company: { name: { legal: 'Acme' } } },
      discoveryAnswers: { repository: { url: 'https://git.example/a.git' }, entities: ['Rocket', null, { name: '  ' }, { title: 'x' }] },
    }, { dryRun: true });
    expect(run.message).toBe('CHECK: CHECK failed: businessProfile.company.name must be text, not an object; '
      + 'discoveryAnswers.entities[1] must be a name or an object with a name; discoveryAnswers.entities[2] must be a name or an object with a name; '
      + 'discoveryAnswers.entities[3] must be a name or an object with a name');
  });
});
