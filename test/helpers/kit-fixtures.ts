import { setTimeout as sleep } from 'node:timers/promises';
import { exampleFiles, exampleManifest } from '../../kit-runtime/test-support/kits.ts';
import { call } from './http.ts';

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
