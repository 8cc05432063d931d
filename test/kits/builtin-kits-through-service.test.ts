import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGitServer, type TestGitServer } from '../../kit-runtime/test-support/git-http-server.ts';
import { call } from '../helpers/http.ts';
import { waitForBundle, waitForExecution } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** The built-in kits from kits/, registered at boot and run through the API and the worker. */
const TOKEN = 'git-token-for-the-builtin-kit-test-0123456789';
let app: TestApp;
let git: TestGitServer;
let key: string;
let orgId: string;
let projectId: string;

const example = async (kitId: string) => {
  const input = JSON.parse(await readFile(`kits/${kitId}/examples/acme-rockets.json`, 'utf8'));
  return { projectId, businessProfile: input.businessProfile, discoveryAnswers: input.discoveryAnswers };
};
const run = async (kitId: string, body: Record<string, unknown>) => {
  const started = await call(app.url, `/api/${orgId}/kits/${kitId}/execute`, { apiKey: key, body });
  expect(started.status, started.text).toBe(201);
  return waitForExecution(app.url, key, orgId, started.body.data.executionId, 30_000);
};

beforeAll(async () => {
  git = await startTestGitServer({ token: TOKEN });
  await git.createRepository('specs', { initialCommit: true });
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', KIT_GIT_ALLOWED_REMOTES: git.url('specs').replace(/specs\.git$/, '') } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Acme Rockets' } })).body.data.id;
});
afterAll(async () => {
  await app?.stop();
  await git?.close();
});

describe('built-in kits', () => {
  it('are registered at boot, read-only, for every tenant', async () => {
    const kits = (await call(app.url, `/api/${orgId}/kits?limit=200`, { apiKey: key })).body.data.kits;
    expect(kits.filter((k: { builtIn: boolean }) => k.builtIn).map((k: { kitId: string }) => k.kitId).sort()).toEqual([
      'composite-bundle', 'git-publish', 'openapi-api', 'postgres-schema', 'project-docs',
    ]);
  });

  it('produce a valid OpenAPI document through the worker', async () => {
    const done = await run('openapi-api', await example('openapi-api'));
    expect(done.status, done.errorMessage).toBe('completed');
    expect(done.outputsFailed).toBe(0);
  });

  it('refuse at CHECK, through the worker, a reference to an entity that is not listed (not a partial run)', async () => {
    const body = await example('project-docs');
    (body.discoveryAnswers as Record<string, any>).entities[1].fields[1].entity = 'Ghost';
    const done = await run('project-docs', body);
    expect([done.status, done.errorMessage, done.outputs]).toEqual(['failed', 'CHECK: CHECK failed: field Launch.rocketId references unknown entity "Ghost"', []]);
  });

  it('compose: the composite resolves its components from the registry and bundles them together', async () => {
    const done = await run('composite-bundle', await example('composite-bundle'));
    expect(done.status, done.errorMessage).toBe('completed');
    const prefixes = new Set(done.outputs.map((o: { filename: string }) => o.filename.split('/')[0]));
    expect([...prefixes].sort()).toEqual(expect.arrayContaining(['api', 'database', 'documentation']));
    await waitForBundle(app.url, key, orgId, done.id);
    const link = await call(app.url, `/api/${orgId}/kits/executions/${done.id}/bundle`, { apiKey: key });
    expect(link.body.data.contents.some((name: string) => name.startsWith('database/'))).toBe(true);
  });

  it('publish to a real git server with a stored token — and a dry run pushes nothing', async () => {
    const body = await example('git-publish');
    (body.discoveryAnswers as Record<string, any>).repository = { url: git.url('specs'), branch: 'main' };
    const stored = await call(app.url, `/api/${orgId}/kits/credentials`, {
      apiKey: key,
      body: { projectId, kitId: 'git-publish', credentialType: 'git-token', credentials: { token: TOKEN, repository: git.url('specs') } },
    });
    expect(stored.status, stored.text).toBe(201);
    const headBefore = await git.git('specs', 'rev-parse', 'main');

    const dry = await run('git-publish', { ...body, options: { dryRun: true } });
    expect(dry.status, dry.errorMessage).toBe('completed');
    expect(await git.git('specs', 'rev-parse', 'main')).toBe(headBefore);
    // The execution says why APPLY did not run, and what VERIFY warned.
    expect(dry.phases.find((p: { phase: string }) => p.phase === 'APPLY')).toMatchObject({ status: 'skipped', detail: expect.stringMatching(/dry ?run/i) });
    expect([dry.applyResult, dry.verifyWarnings]).toEqual([null, ['nothing to verify: dry run']]);

    const real = await run('git-publish', body);
    expect(real.status, real.errorMessage).toBe('completed');
    const headAfter = await git.git('specs', 'rev-parse', 'main');
    expect(headAfter).not.toBe(headBefore);
    // What APPLY returned: the commit it made, which the caller could not learn otherwise.
    // The token is the host's alone (hostOnly), so the repository it is bound to reads as it is.
    expect(real.applyResult).toMatchObject({ repository: git.url('specs'), branch: 'main', commit: headAfter.trim(), changed: true });
    expect(await git.git('specs', 'ls-tree', '-r', '--name-only', 'main')).toMatch(/README\.md/);
    expect(app.rawLog.join('\n')).not.toContain(TOKEN);
  });
});

describe('git-publish, the folder a user names', () => {
  let folderProject: string;
  const publish = async (repository: Record<string, unknown>, options: Record<string, boolean> = {}) => {
    const body = { ...(await example('git-publish')), projectId: folderProject };
    return run('git-publish', { ...body, discoveryAnswers: { ...body.discoveryAnswers, repository }, options });
  };
  beforeAll(async () => {
    await git.createRepository('folders', { initialCommit: true });
    folderProject = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Acme Folders' } })).body.data.id;
    const stored = await call(app.url, `/api/${orgId}/kits/credentials`, {
      apiKey: key,
      body: { projectId: folderProject, kitId: 'git-publish', credentialType: 'git-token', credentials: { token: TOKEN, repository: git.url('folders') } },
    });
    expect(stored.status, stored.text).toBe(201);
  });

  it('publishes into the folder "specs/" names, where it used to fail APPLY after a dry run had passed', async () => {
    const dry = await publish({ url: git.url('folders'), directory: 'specs/' }, { dryRun: true });
    expect([dry.status, dry.errorMessage]).toEqual(['completed', null]);
    const real = await publish({ url: git.url('folders'), directory: 'specs/' });
    expect([real.status, real.errorMessage]).toEqual(['completed', null]);
    expect(real.applyResult).toMatchObject({ branch: 'main', changed: true, commit: (await git.git('folders', 'rev-parse', 'main')).trim() });
    expect(await git.git('folders', 'ls-tree', '-r', '--name-only', 'main')).toBe('README.md\nspecs/README.md\nspecs/project.json');
  });

  it('refuses at CHECK, in a dry run, a folder APPLY would refuse', async () => {
    const dry = await publish({ url: git.url('folders'), directory: 'docs/CON' }, { dryRun: true });
    expect([dry.status, dry.errorMessage]).toEqual(['failed', 'CHECK: CHECK failed: discoveryAnswers.repository.directory must not use the reserved device name "CON"']);
  });
});
