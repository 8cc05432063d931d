import sodium from 'libsodium-wrappers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The API refuses a `credentials` secret that holds no value: as the newest of its type it would
 * hide an older credential that works. It cannot look inside a client-sealed value, so one that
 * holds nothing is stored; when a run opens it, it is marked invalid and skipped like any value
 * that does not open, and the older credential reaches the kit.
 */
let app: TestApp;
let apiKey: string;
let orgId: string;
let projectId: string;

// APPLY fails unless the worker handed over the older, working token.
const applyHook = `
function apply(context) {
  var token = context.credentials && context.credentials.deploy && context.credentials.deploy.token;
  if (token !== 'older-token-value-that-works') throw new Error('credential not received');
  return { applied: true };
}
`;

beforeAll(async () => {
  await sodium.ready;
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
  apiKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  const kit = sampleKit({ id: 'deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook });
  const published = await call(app.url, `/api/${orgId}/kits`, { apiKey, body: kit });
  expect(published.status, published.text).toBe(201);
  projectId = (await call(app.url, '/api/projects', { apiKey, body: { name: 'Deploys' } })).body.data.id;
});
afterAll(() => app?.stop());

const base = () => `/api/${orgId}/kits/credentials`;
const store = (body: Record<string, unknown>) => call(app.url, base(), { apiKey, body: { projectId, kitId: 'deployer', credentialType: 'deploy', ...body } });

describe('a client-sealed credential that holds no value', () => {
  it.each([
    ['an empty object', '{}'],
    ['only empty strings and nulls', '{"token":"","nested":{"other":null,"list":[]}}'],
  ])('(%s) does not hide an older credential that works: the run gets the older one, and the empty one is marked invalid', async (_, json) => {
    await ownerQuery(app.database.ownerUrl, 'delete from kit_credentials');
    const older = await store({ credentials: { token: 'older-token-value-that-works' } });
    expect(older.status, older.text).toBe(201);
    // What a client does: crypto_box_seal the secret JSON to the organization's public key, standard base64.
    const publicKey = (await call(app.url, `${base()}/public-key`, { apiKey })).body.data;
    const ciphertext = sodium.to_base64(
      sodium.crypto_box_seal(sodium.from_string(json), sodium.from_base64(publicKey.key, sodium.base64_variants.ORIGINAL)),
      sodium.base64_variants.ORIGINAL,
    );
    const empty = await store({ sealedCredentials: { keyId: publicKey.keyId, ciphertext } });
    expect(empty.status, empty.text).toBe(201);

    const started = await call(app.url, `/api/${orgId}/kits/deployer/execute`, { apiKey, body: sampleExecutionBody(projectId) });
    expect(started.status, started.text).toBe(201);
    const finished = await waitForExecution(app.url, apiKey, orgId, started.body.data.executionId);
    expect(finished.status, finished.errorMessage).toBe('completed');

    const listed = await call(app.url, `${base()}?projectId=${projectId}`, { apiKey });
    const statusOf = (id: string) => listed.body.data.credentials.find((credential: { id: string }) => credential.id === id)?.status;
    expect([statusOf(older.body.data.credentialId), statusOf(empty.body.data.credentialId)]).toEqual(['active', 'invalid']);
  });
});
