import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Hostile kits published and run through the real service (API and worker in one process, as
 * `npm start` runs them): each fails its own execution with a clear message, the API keeps
 * answering while they run, and the worker goes on to run an honest kit.
 */
let app: TestApp;
let key: string;
let orgId: string;
let projectId: string;

const hostile: Record<string, { phase: string; source: string; message: RegExp }> = {
  'endless-loop': { phase: 'PLAN', source: 'function plan() { for (;;) {} }', message: /time limit/ },
  'endless-promise-loop': { phase: 'PLAN', source: 'async function plan() { await null; for (;;) {} }', message: /time limit/ },
  'memory-bomb': { phase: 'PLAN', source: 'function plan() { var a = []; for (;;) a.push(new Array(1e6).fill(1)); }', message: /memory limit/ },
  'escape-attempt': { phase: 'PLAN', source: "function plan() { return { data: this.constructor.constructor('return process')().env }; }", message: /process|not defined|PLAN/ },
};

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', WORKER_CONCURRENCY: '2' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Target' } })).body.data.id;
  for (const [id, { phase, source }] of Object.entries(hostile)) {
    const kit = sampleKit({ id });
    kit.manifest.hooks[phase] = `hooks/${phase.toLowerCase()}.js`;
    kit.files[`hooks/${phase.toLowerCase()}.js`] = source;
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
  }
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'honest-kit' }) })).status).toBe(201);
});
afterAll(() => app?.stop());

describe('hostile kits run through the service', () => {
  it('each fail their own execution safely while the API stays responsive, and an honest kit runs afterwards', async () => {
    const started = await Promise.all(
      Object.keys(hostile).map((id) => call(app.url, `/api/${orgId}/kits/${id}/execute`, { apiKey: key, body: sampleExecutionBody(projectId) })),
    );
    // While the hostile runs burn their limits, the API answers promptly.
    const latencies: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      const t = performance.now();
      expect((await call(app.url, '/api/health')).status).toBe(200);
      latencies.push(performance.now() - t);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(Math.max(...latencies)).toBeLessThan(1000);

    for (const [index, id] of Object.keys(hostile).entries()) {
      const ended = await waitForExecution(app.url, key, orgId, started[index]!.body.data.executionId, 30_000);
      expect(ended.status, id).toBe('failed');
      expect(ended.errorMessage, id).toMatch(hostile[id]!.message);
      expect(ended.errorMessage, id).not.toMatch(/\/work\/|node_modules|at .*\.ts:\d+/);
    }
    const honest = await call(app.url, `/api/${orgId}/kits/honest-kit/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    expect((await waitForExecution(app.url, key, orgId, honest.body.data.executionId)).status).toBe('completed');
  }, 90_000);
});

describe('reaching the network through a kit', () => {
  const reachFor = async (id: string, kitType: string, repository: string) => {
    const kit = sampleKit({ id });
    kit.manifest.metadata.kitType = kitType;
    kit.manifest.hooks.APPLY = 'hooks/apply.js';
    kit.files['hooks/apply.js'] = `async function apply() { return await kit.gitCommit({ repository: ${JSON.stringify(repository)}, message: 'm', files: [{ path: 'a.txt', content: 'b' }] }); }`;
    const published = await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit });
    expect(published.status, published.text).toBe(201);
    const started = await call(app.url, `/api/${orgId}/kits/${id}/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    return waitForExecution(app.url, key, orgId, started.body.data.executionId, 30_000);
  };

  it('is for platform kits only: a kit that makes files has no git capability', async () => {
    const ended = await reachFor('file-kit-pushing', 'file', 'https://github.com/acme/specs.git');
    expect(ended.status).toBe('failed');
    expect(ended.errorMessage).toMatch(/^APPLY: .*kit\.gitCommit is lent only to kits of kitType platform or hybrid/);
  });

  it('never reaches the worker\'s own host or a network that is not public, by default', async () => {
    for (const [id, repository] of [['metadata-probe', 'https://169.254.169.254/latest'], ['loopback-probe', 'https://127.0.0.1:5432/x.git']] as const) {
      const ended = await reachFor(id, 'platform', repository);
      expect(ended.status, id).toBe('failed');
      expect(ended.errorMessage, id).toMatch(/is not an allowed git remote/);
    }
  });
});
