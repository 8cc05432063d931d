import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGitServer, type TestGitServer } from '../../kit-runtime/test-support/git-http-server.ts';
import { call } from '../helpers/http.ts';
import { waitForExecution } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** What a user running the built-in git-publish kit through the API sees for the folder they name. */
const TOKEN = 'git-token-for-the-directory-test-0123456789';
let app: TestApp;
let git: TestGitServer;
let key: string;
let orgId: string;
let projectId: string;

const run = async (repository: Record<string, unknown>, options: Record<string, boolean> = {}) => {
  const input = JSON.parse(await readFile('kits/git-publish/examples/acme-rockets.json', 'utf8'));
  const body = { projectId, businessProfile: input.businessProfile, discoveryAnswers: { ...input.discoveryAnswers, repository }, options };
  const started = await call(app.url, `/api/${orgId}/kits/git-publish/execute`, { apiKey: key, body });
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
  const stored = await call(app.url, `/api/${orgId}/kits/credentials`, {
    apiKey: key,
    body: { projectId, kitId: 'git-publish', credentialType: 'git-token', credentials: { token: TOKEN, repository: git.url('specs') } },
  });
  expect(stored.status, stored.text).toBe(201);
});
afterAll(async () => {
  await app?.stop();
  await git?.close();
});

describe('git-publish through the service', () => {
  it('publishes into the folder "specs/" names, where it used to fail APPLY after a dry run had passed', async () => {
    const dry = await run({ url: git.url('specs'), directory: 'specs/' }, { dryRun: true });
    expect([dry.status, dry.errorMessage]).toEqual(['completed', null]);
    const real = await run({ url: git.url('specs'), directory: 'specs/' });
    expect([real.status, real.errorMessage]).toEqual(['completed', null]);
    expect(real.applyResult).toMatchObject({ branch: 'main', changed: true, commit: (await git.git('specs', 'rev-parse', 'main')).trim() });
    expect(await git.git('specs', 'ls-tree', '-r', '--name-only', 'main')).toBe('README.md\nspecs/README.md\nspecs/project.json');
  });

  it('refuses at CHECK, in a dry run, a folder APPLY would refuse', async () => {
    const dry = await run({ url: git.url('specs'), directory: 'docs/CON' }, { dryRun: true });
    expect([dry.status, dry.errorMessage]).toEqual(['failed', 'CHECK: CHECK failed: discoveryAnswers.repository.directory must not use the reserved device name "CON"']);
  });
});
