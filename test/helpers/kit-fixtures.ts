import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { countRows } from './owner-sql.ts';
import { exampleFiles, exampleManifest } from '../../kit-runtime/test-support/kits.ts';
import { call } from './http.ts';
import { scratchDir } from './scratch-dir.ts';
import { startTestApp } from './test-app.ts';

/** A publishable kit: the runtime's example kit (json, yaml and markdown outputs) under a new id. */
export function sampleKit(overrides: { id?: string; version?: string; credentials?: Array<{ id: string; description: string; required: boolean }>; applyHook?: string } = {}) {
  const manifest = exampleManifest() as unknown as Record<string, any>;
  manifest.metadata.id = overrides.id ?? 'service-starter';
  manifest.metadata.version = overrides.version ?? '1.0.0';
  const files: Record<string, string> = exampleFiles();
  if (overrides.credentials) manifest.credentials = overrides.credentials;
  if (overrides.applyHook) {
    manifest.hooks.APPLY = 'hooks/apply.js';
    files['hooks/apply.js'] = overrides.applyHook;
  }
  return { manifest, files };
}

export const sampleExecutionBody = (projectId: string) => ({
  projectId,
  businessProfile: { company: { name: 'Acme Rockets', industry: 'aerospace' } },
  discoveryAnswers: { entities: ['Rocket', 'Launch'], database: 'postgres' },
});

/** Polls an execution until it leaves pending/running. */
export async function waitForExecution(url: string, apiKey: string, orgId: string, executionId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await call(url, `/api/${orgId}/kits/executions/${executionId}`, { apiKey });
    if (response.status !== 200) throw new Error(`execution poll answered ${response.status}: ${response.text}`);
    if (!['pending', 'running'].includes(response.body.data.status)) return response.body.data;
    if (Date.now() > deadline) throw new Error(`execution still ${response.body.data.status}`);
    await sleep(100);
  }
}

/** Polls until the execution's bundle (built by its own job after the execution ends) is ready. */
export async function waitForBundle(url: string, apiKey: string, orgId: string, executionId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const execution = await waitForExecution(url, apiKey, orgId, executionId, timeoutMs);
    if (execution.bundleStatus !== 'building') return execution;
    if (Date.now() > deadline) throw new Error('bundle still building');
    await sleep(50);
  }
}

// APPLY fails unless the worker opened the credential and handed it over.
const applyNeedingDeployToken = `
function apply(context) {
  var token = context.credentials && context.credentials.deploy && context.credentials.deploy.token;
  if (!token) throw new Error('credential not received');
  return { applied: true };
}
`;

/**
 * Publishes the kit `deployer`, whose APPLY needs its `deploy` credential, and stores one for a new
 * project. `execute()` starts a run of it and answers its execution id.
 */
export async function publishDeployerWithCredential(url: string, apiKey: string, orgId: string, token: string) {
  const kit = sampleKit({ id: 'deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook: applyNeedingDeployToken });
  const published = await call(url, `/api/${orgId}/kits`, { apiKey, body: kit });
  if (published.status !== 201) throw new Error(`publishing deployer answered ${published.status}: ${published.text}`);
  const projectId: string = (await call(url, '/api/projects', { apiKey, body: { name: 'Deploys' } })).body.data.id;
  const stored = await call(url, `/api/${orgId}/kits/credentials`, { apiKey, body: { projectId, kitId: 'deployer', credentialType: 'deploy', credentials: { token } } });
  if (stored.status !== 201) throw new Error(`storing the deploy credential answered ${stored.status}: ${stored.text}`);
  const execute = async (): Promise<string> => {
    const started = await call(url, `/api/${orgId}/kits/deployer/execute`, { apiKey, body: sampleExecutionBody(projectId) });
    if (started.status !== 201) throw new Error(`starting deployer answered ${started.status}: ${started.text}`);
    return started.body.data.executionId;
  };
  return { projectId, credentialId: stored.body.data.credentialId as string, execute };
}

/** A worker that beats every 200 ms and is judged dead after 1 s of silence; the reaper looks every second. */
export const FAST_REAPING_WORKER_ENV = { WORKER_HEARTBEAT_MS: '200', WORKER_STALE_AFTER_MS: '1000' };

/**
 * An API-only app (workers are started by the test, against its database) with `kit` published in
 * the bootstrap organization and a project named `projectName`; `execute()` starts a run of the kit
 * on it and answers the execution id.
 */
export async function apiWithKitAndProject(kit: ReturnType<typeof sampleKit>, projectName: string) {
  const api = await startTestApp({ mode: 'api' });
  const key = api.bootstrap.apiKey;
  const orgId = api.bootstrap.organizationId;
  const published = await call(api.url, `/api/${orgId}/kits`, { apiKey: key, body: kit });
  if (published.status !== 201) throw new Error(`publishing the kit answered ${published.status}: ${published.text}`);
  const projectId = (await call(api.url, '/api/projects', { apiKey: key, body: { name: projectName } })).body.data.id as string;
  const execute = async () => {
    const started = await call(api.url, `/api/${orgId}/kits/${kit.manifest.metadata.id}/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    if (started.status !== 201) throw new Error(`starting the execution answered ${started.status}: ${started.text}`);
    return started.body.data.executionId as string;
  };
  return { api, key, orgId, projectId, execute };
}

/** A composite kit of one markdown output whose components are `components`, each under `part<i>/`. */
export function compositeKit(id: string, version: string, components: Array<{ kitId: string; version?: string }>) {
  return {
    manifest: {
      metadata: { id, displayName: id, version, description: 'test', author: 'test', kitType: 'composite' },
      platform: { name: 'none', category: 'test' },
      phases: ['PLAN'],
      discovery: { pools: [] },
      outputs: [{ id: 'index', filename: `${id}.md`, template: 't/index.hbs', outputType: 'markdown' }],
      components: components.map((component, index) => ({ ...component, prefix: `part${index}` })),
    },
    files: { 't/index.hbs': '# index\n' },
  };
}

/** How many kit rows and kit version rows the database holds: a refused publish leaves both as they were. */
export async function storedKitCounts(ownerUrl: string): Promise<number[]> {
  return [await countRows(ownerUrl, 'kits'), await countRows(ownerUrl, 'kit_versions')];
}


/** A kits/ directory as a release ships it, holding one kit of `kitId` (version 5.0.0, "The built-in one"). */
export async function builtInKitsDirectory(kitId: string): Promise<string> {
  const directory = await scratchDir('builtin-kits');
  const kit = sampleKit({ id: kitId, version: '5.0.0' });
  kit.manifest.metadata.displayName = 'The built-in one';
  await mkdir(join(directory, kitId));
  await writeFile(join(directory, kitId, 'kit.json'), JSON.stringify(kit.manifest));
  for (const [path, text] of Object.entries(kit.files)) {
    await mkdir(dirname(join(directory, kitId, path)), { recursive: true });
    await writeFile(join(directory, kitId, path), text);
  }
  return directory;
}
