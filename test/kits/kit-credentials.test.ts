import { sql } from 'kysely';
import sodium from 'libsodium-wrappers';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCredentialVault } from '../../control-plane/domains/kit-credentials/credential-vault.ts';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { untilLockWaiters, whileTransactionHolds } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { recordedResponses } from '../helpers/response-log.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';

const SECRET = 'ghp_super-secret-token-value-31337';
const CLIENT_SECRET = 'client-sealed-secret-value-424242';

let app: TestApp;
let key: string;
let orgId: string;
let projectId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const base = () => `/api/${orgId}/kits/credentials`;

// APPLY fails unless the worker opened the credential and handed it over.
const applyHook = `
function apply(context) {
  var token = context.credentials && context.credentials.deploy && context.credentials.deploy.token;
  if (!token || token.length < 20) throw new Error('credential not received');
  return { applied: true };
}
`;

beforeAll(async () => {
  await sodium.ready;
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  const kit = sampleKit({ id: 'deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook });
  const published = await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit });
  expect(published.status, published.text).toBe(201);
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Deploys' } })).body.data.id;
});
afterAll(() => app?.stop());

/** What a client sends: `text` sealed (crypto_box_seal) to the API's public key, in standard base64. */
const sealTo = (publicKey: { key: string }, text: string) =>
  sodium.to_base64(sodium.crypto_box_seal(sodium.from_string(text), sodium.from_base64(publicKey.key, sodium.base64_variants.ORIGINAL)), sodium.base64_variants.ORIGINAL);
const store = (body: Record<string, unknown>) => call(app.url, base(), { apiKey: key, body: { projectId, kitId: 'deployer', credentialType: 'deploy', ...body } });
const run = async (options: Record<string, boolean> = {}) => {
  const started = await call(app.url, `/api/${orgId}/kits/deployer/execute`, { apiKey: key, body: { ...sampleExecutionBody(projectId), options } });
  expect(started.status, started.text).toBe(201);
  return waitForExecution(app.url, key, orgId, started.body.data.executionId);
};

describe('stored credentials', () => {
  let credentialId: string;

  it('publishes the public key clients seal to', async () => {
    const response = await call(app.url, `${base()}/public-key`, { apiKey: key });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ keyId: expect.any(String), key: expect.any(String) });
    expect(sodium.from_base64(response.body.data.key, sodium.base64_variants.ORIGINAL)).toHaveLength(32);
  });

  it('seals plain credentials on the server and lists them without any secret', async () => {
    const response = await store({ credentials: { token: SECRET } });
    expect(response.status, response.text).toBe(201);
    expect(response.body.data).toEqual({ credentialId: expect.any(String), status: 'active', createdAt: expect.any(String) });
    credentialId = response.body.data.credentialId;
    const [row] = await sqlAsOwner('select sealed from kit_credentials where id = $1', [credentialId]);
    expect(row.sealed).not.toContain(SECRET);
    const listed = await call(app.url, `${base()}?projectId=${projectId}`, { apiKey: key });
    expect(listed.body.data.credentials).toEqual([
      expect.objectContaining({ id: credentialId, kitId: 'deployer', credentialType: 'deploy', status: 'active', lastCheckedAt: null }),
    ]);
    expect(listed.text).not.toMatch(/sealed|ciphertext|ghp_/);
  });

  it('are opened only in the worker, only for APPLY: a dry run leaves them untouched', async () => {
    const dry = await run({ dryRun: true });
    expect(dry.status).toBe('completed');
    expect((await sqlAsOwner('select last_checked_at from kit_credentials where id = $1', [credentialId]))[0].last_checked_at).toBeNull();
    const real = await run();
    expect(real.status, real.errorMessage).toBe('completed');
    expect((await sqlAsOwner('select last_check_status from kit_credentials where id = $1', [credentialId]))[0].last_check_status).toBe('succeeded');
  });

  it('accept a client-sealed value (crypto_box_seal to the public key) that never opens in the API', async () => {
    const publicKey = (await call(app.url, `${base()}/public-key`, { apiKey: key })).body.data;
    const ciphertext = sealTo(publicKey, JSON.stringify({ token: CLIENT_SECRET }));
    await sqlAsOwner('delete from kit_credentials where id = $1', [credentialId]);
    const response = await store({ sealedCredentials: { keyId: publicKey.keyId, ciphertext } });
    expect(response.status, response.text).toBe(201);
    credentialId = response.body.data.credentialId;
    expect((await run()).status).toBe('completed');
    const wrongKey = await store({ sealedCredentials: { keyId: 'k-unknown', ciphertext } });
    expect(wrongKey.status).toBe(400);
    expect((await store({})).status).toBe(400);
    expect((await store({ credentials: { token: 'x' }, sealedCredentials: { keyId: publicKey.keyId, ciphertext } })).status).toBe(400);
  });

  it('bind each ciphertext to its row: copied onto another credential it does not open', async () => {
    await sqlAsOwner('delete from kit_credentials where id = $1', [credentialId]);
    const first = (await store({ credentials: { token: 'first-token-value-that-is-long' } })).body.data.credentialId;
    const second = (await store({ credentials: { token: 'second-token-value-that-is-long' } })).body.data.credentialId;
    // Someone with write access to the database moves the first secret onto the second row.
    await sqlAsOwner('update kit_credentials set sealed = (select sealed from kit_credentials where id = $1) where id = $2', [first, second]);
    await sqlAsOwner('delete from kit_credentials where id = $1', [first]);
    const moved = await run();
    expect(moved.status).toBe('failed');
    expect(moved.errorMessage).toMatch(/credential "deploy"/);
    expect((await sqlAsOwner('select status, last_check_status from kit_credentials where id = $1', [second]))[0]).toEqual({ status: 'invalid', last_check_status: 'failed' });
    await sqlAsOwner('delete from kit_credentials where id = $1', [second]);
  });

  it('fall back past a newer credential that does not open to an older one that does, and say "could not be opened" when none does', async () => {
    const good = (await store({ credentials: { token: 'older-token-value-that-works' } })).body.data.credentialId;
    // A client sealed the newer one to some other key: the API cannot tell, the worker can.
    const stranger = sodium.crypto_box_keypair();
    const foreignSeal = sodium.to_base64(sodium.crypto_box_seal(sodium.from_string('{"token":"sealed-to-another-key"}'), stranger.publicKey), sodium.base64_variants.ORIGINAL);
    const publicKey = (await call(app.url, `${base()}/public-key`, { apiKey: key })).body.data;
    const bad = (await store({ sealedCredentials: { keyId: publicKey.keyId, ciphertext: foreignSeal } })).body.data.credentialId;
    expect((await run()).status).toBe('completed');
    const states = async () => Object.fromEntries((await sqlAsOwner('select id, status from kit_credentials where id = any($1)', [[good, bad]])).map((r) => [r.id, r.status]));
    expect(await states()).toEqual({ [good]: 'active', [bad]: 'invalid' });

    await sqlAsOwner('delete from kit_credentials where id = $1', [good]);
    await sqlAsOwner("update kit_credentials set status = 'active' where id = $1", [bad]);
    const none = await run();
    expect(none.status).toBe('failed');
    expect(none.errorMessage).toBe('APPLY: credential "deploy" could not be opened');
    await sqlAsOwner('delete from kit_credentials where id = $1', [bad]);
  });

  it('refuse what can never be used: a sealed value too short to open, a type the kit does not declare, and unknown fields', async () => {
    const publicKey = (await call(app.url, `${base()}/public-key`, { apiKey: key })).body.data;
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ sealedCredentials: { keyId: publicKey.keyId, ciphertext: 'AA==' } }, 'sealedCredentials'],
      [{ credentialType: 'not-declared', credentials: { token: SECRET } }, 'credentialType'],
      [{ credentialType: 'DEPLOY', credentials: { token: SECRET } }, 'credentialType'],
      [{ credentials: { token: SECRET }, foo: 1 }, ''],
      [{ credentials: { 'to\u0000ken': SECRET } }, 'credentials'],
      [{ credentials: { token: 'sec\u0000ret' } }, 'credentials.token'],
      [{ credentials: { token: 'sec\ud800ret' } }, 'credentials.token'],
    ];
    for (const [body, field] of refusals) {
      const response = await store(body);
      expect([response.status, response.body.error?.code], JSON.stringify(body)).toEqual([400, 'VALIDATION_ERROR']);
      if (field) expect(response.body.error.details.issues.map((i: { field: string }) => i.field)).toContain(field);
      expect(response.text).not.toContain(SECRET);
    }
    expect(await sqlAsOwner('select id from kit_credentials where project_id = $1', [projectId])).toEqual([]);
  });

  it('refuse a secret beyond the bound (64 values, 16 KiB of JSON) by field, storing nothing', async () => {
    const rows = () => countRows(app.database.ownerUrl, 'kit_credentials');
    const before = await rows();
    const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`key${i}`, `${SECRET}-${i}`]));
    const refused = await store({ credentials: tooMany });
    expect([refused.status, refused.body.error?.code], refused.text).toEqual([400, 'VALIDATION_ERROR']);
    expect(refused.body.error.details.issues[0].field).toBe('credentials');
    expect(refused.body.error.message).toBe('a credential secret holds 65 values; at most 64 are allowed (strings, numbers and booleans, at any depth)');
    expect(refused.text).not.toContain(SECRET);

    // A client-sealed value: the API cannot look inside, but refuses a box too large for the bound.
    const publicKey = (await call(app.url, `${base()}/public-key`, { apiKey: key })).body.data;
    const sealOfSize = (bytes: number) => {
      const text = JSON.stringify({ token: CLIENT_SECRET + 'x'.repeat(bytes - CLIENT_SECRET.length - '{"token":""}'.length) });
      expect(text).toHaveLength(bytes);
      return sealTo(publicKey, text);
    };
    // One byte over 16 KiB: its base64 is as long as the largest box's, the decoded box is not.
    const justOver = await store({ sealedCredentials: { keyId: publicKey.keyId, ciphertext: sealOfSize(16_385) } });
    expect([justOver.status, justOver.body.error?.code], justOver.text).toEqual([400, 'VALIDATION_ERROR']);
    expect(justOver.body.error.details.issues[0].field).toBe('sealedCredentials');
    expect(justOver.body.error.message).toContain('a client-sealed value is a 16433-byte sealed box; at most 16432 are allowed');
    // ~40 KB, as stored before the bound: refused by the ciphertext's length.
    const farOver = await store({ sealedCredentials: { keyId: publicKey.keyId, ciphertext: sealOfSize(40_000) } });
    expect([farOver.status, farOver.body.error?.code], farOver.text).toEqual([400, 'VALIDATION_ERROR']);
    expect(farOver.body.error.details.issues[0].field).toBe('sealedCredentials.ciphertext');
    for (const response of [justOver, farOver]) expect(response.text).not.toContain(CLIENT_SECRET);
    expect(await rows()).toBe(before);
  });

  it('store a small client-sealed value holding 65 values (the API cannot look inside), then mark it invalid when a run opens it', async () => {
    const good = (await store({ credentials: { token: 'older-token-value-that-works' } })).body.data.credentialId;
    // A few hundred bytes, but 65 values: the token a run would use, and 64 more.
    const packed = { token: 'newer-token-value-that-would-work', ...Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, `v${i}`])) };
    const publicKey = (await call(app.url, `${base()}/public-key`, { apiKey: key })).body.data;
    const ciphertext = sealTo(publicKey, JSON.stringify(packed));
    const stored = await store({ sealedCredentials: { keyId: publicKey.keyId, ciphertext } });
    expect(stored.status, stored.text).toBe(201);
    const bad = stored.body.data.credentialId;
    // The newest does not open: the run falls back to the older one, and the newest is marked invalid.
    expect((await run()).status).toBe('completed');
    const states = async () => Object.fromEntries((await sqlAsOwner('select id, status from kit_credentials where id = any($1)', [[good, bad]])).map((r) => [r.id, r.status]));
    expect(await states()).toEqual({ [good]: 'active', [bad]: 'invalid' });
    expect(app.rawLog.some((line) => line.includes(bad) && line.includes('client-sealed value holds 65 values; at most 64 are allowed'))).toBe(true);

    await sqlAsOwner('delete from kit_credentials where id = $1', [good]);
    await sqlAsOwner("update kit_credentials set status = 'active' where id = $1", [bad]);
    const none = await run();
    expect(none.status).toBe('failed');
    expect(none.errorMessage).toBe('APPLY: credential "deploy" could not be opened');
    expect((await sqlAsOwner('select status, last_check_status from kit_credentials where id = $1', [bad]))[0]).toEqual({ status: 'invalid', last_check_status: 'failed' });
    await sqlAsOwner('delete from kit_credentials where id = $1', [bad]);
  });

  it("refuse a project of another organization, even one the caller also belongs to: no credential planted, no run started", async () => {
    // The caller founds a second organization; the project belongs to the first.
    const other = await call(app.url, '/api/organizations', { apiKey: key, body: { name: 'Side Org', slug: 'side-org' } });
    expect(other.status, other.text).toBe(201);
    const otherOrg = other.body.data.id;
    const otherKit = sampleKit({ id: 'deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook });
    expect((await call(app.url, `/api/${otherOrg}/kits`, { apiKey: key, body: otherKit })).status).toBe(201);
    const planted = await call(app.url, `/api/${otherOrg}/kits/credentials`, { apiKey: key, body: { projectId, kitId: 'deployer', credentialType: 'deploy', credentials: { token: SECRET } } });
    expect([planted.status, planted.body.error?.code, planted.body.error?.details?.field]).toEqual([404, 'NOT_FOUND', 'projectId']);
    const executed = await call(app.url, `/api/${otherOrg}/kits/deployer/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    expect([executed.status, executed.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    expect(await sqlAsOwner('select id from kit_credentials where organization_id = $1', [otherOrg])).toEqual([]);
    expect(await sqlAsOwner('select id from kit_executions where organization_id = $1', [otherOrg])).toEqual([]);
  });

  it('answer NOT_FOUND, not a 500, when the project is being deleted as a credential is stored or a run started', async () => {
    const requests = {
      credential: (id: string) => call(app.url, base(), { apiKey: key, body: { projectId: id, kitId: 'deployer', credentialType: 'deploy', credentials: { token: SECRET } } }),
      execution: (id: string) => call(app.url, `/api/${orgId}/kits/deployer/execute`, { apiKey: key, body: sampleExecutionBody(id) }),
    };
    for (const [what, request] of Object.entries(requests)) {
      const doomed = (await call(app.url, '/api/projects', { apiKey: key, body: { name: `Doomed ${what}` } })).body.data.id;
      // The delete is in flight (the project row locked and deleted, not committed) when the request reads the project.
      const response = await whileTransactionHolds(
        app.database.ownerUrl,
        async (holder) => {
          await holder.query('select id from projects where id = $1 for update', [doomed]);
          await holder.query('delete from projects where id = $1', [doomed]);
        },
        () => request(doomed),
      );
      expect([response.status, response.body.error?.code, response.body.error?.details], what).toEqual([404, 'NOT_FOUND', { field: 'projectId' }]);
    }
  });

  it('survive key rotation: every credential is re-sealed under the new key and still opens', async () => {
    credentialId = (await store({ credentials: { token: SECRET } })).body.data.credentialId;
    const before = (await sqlAsOwner('select key_id, sealed from kit_credentials where id = $1', [credentialId]))[0];
    const rotation = await call(app.url, '/api/admin/credential-keys/rotate', { apiKey: key, method: 'POST' });
    expect(rotation.status, rotation.text).toBe(202);
    const deadline = Date.now() + 10_000;
    while ((await sqlAsOwner('select key_id from kit_credentials where id = $1', [credentialId]))[0].key_id === before.key_id) {
      if (Date.now() > deadline) throw new Error('rotation did not happen');
      await sleep(100);
    }
    const keys = await sqlAsOwner('select key_id, retired_at is not null as retired from credential_keys where organization_id = $1 order by created_at', [orgId]);
    expect(keys).toHaveLength(2);
    expect(keys.map((k) => k.retired)).toEqual([true, false]);
    expect((await call(app.url, `${base()}/public-key`, { apiKey: key })).body.data.keyId).toBe(keys[1].key_id);
    expect((await run()).status).toBe('completed');
  });

  it('survive two rotations at once: the organization keeps one current key and every credential still opens', async () => {
    // A rotation requested while another runs gets its own job (the job key only replaces a pending
    // one), so two workers can rotate together; each must not retire the key the other just added.
    const vaults = [1, 2].map(() => createCredentialVault(app.service.owner.db, TEST_SERVER_SECRET, app.service.log));
    // The credential rows are held until both rotations are under way and waiting on a lock.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let rowsHeld!: () => void;
    const holding = new Promise<void>((resolve) => (rowsHeld = resolve));
    const holder = app.service.owner.db.transaction().execute(async (trx) => {
      await sql`select id from kit_credentials for update`.execute(trx);
      rowsHeld();
      await released;
    });
    await holding;
    const rotations = Promise.all(vaults.map((vault) => vault.rotate()));
    await untilLockWaiters(app.database.ownerUrl, 2);
    release();
    await holder;
    await rotations;
    const current = await sqlAsOwner('select key_id from credential_keys where organization_id = $1 and retired_at is null', [orgId]);
    expect(current).toHaveLength(1);
    const publicKey = await call(app.url, `${base()}/public-key`, { apiKey: key });
    expect(publicKey.status, publicKey.text).toBe(200);
    expect(publicKey.body.data.keyId).toBe(current[0].key_id);
    expect((await sqlAsOwner('select key_id from kit_credentials where id = $1', [credentialId]))[0].key_id).toBe(current[0].key_id);
    const after = await run();
    expect(after.status, after.errorMessage).toBe('completed');
  });

  it('are opened only for a kit that declares them, also when a host capability asks', async () => {
    // This kit declares no credential, yet its APPLY names one to kit.gitCommit: the host must not open it.
    const undeclaredApply = `
async function apply(context, kit) {
  await kit.gitCommit({ repository: 'https://git.example.invalid/none.git', message: 'x', files: [{ path: 'a.txt', content: 'a' }], credential: 'deploy' });
  return { applied: true };
}
`;
    // Stored while version 1.0.0 declared it; the latest version no longer does.
    const declaring = sampleKit({ id: 'undeclaring', credentials: [{ id: 'deploy', description: 'Deploy token', required: false }] });
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: declaring })).status).toBe(201);
    const stored = await call(app.url, base(), { apiKey: key, body: { projectId, kitId: 'undeclaring', credentialType: 'deploy', credentials: { token: SECRET } } });
    expect(stored.status, stored.text).toBe(201);
    // A platform kit: the server lends git capabilities to no other kind.
    const kit = sampleKit({ id: 'undeclaring', version: '1.1.0', applyHook: undeclaredApply });
    kit.manifest.metadata.kitType = 'platform';
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
    const started = await call(app.url, `/api/${orgId}/kits/undeclaring/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    const done = await waitForExecution(app.url, key, orgId, started.body.data.executionId);
    expect(done.status).toBe('failed');
    expect(done.errorMessage).toContain('credential "deploy" is not configured');
    expect((await sqlAsOwner('select last_checked_at from kit_credentials where id = $1', [stored.body.data.credentialId]))[0].last_checked_at).toBeNull();
    await sqlAsOwner('delete from kit_credentials where id = $1', [stored.body.data.credentialId]);
  });

  it('refuse a NUL character in a kit id by field, not with a 500', async () => {
    const stored = await store({ kitId: 'deployer\u0000', credentials: { token: SECRET } });
    expect(stored.status, stored.text).toBe(400);
    expect(stored.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(['kitId']);
    const listed = await call(app.url, `${base()}?kitId=%00`, { apiKey: key });
    expect(listed.status, listed.text).toBe(400);
    expect(listed.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(['kitId']);
  });

  it('refuse a kit id the kit routes would not take, by field and storing nothing, as the lists\' ?kitId= filters do', async () => {
    const stored = await countRows(app.database.ownerUrl, 'kit_credentials');
    for (const kitId of ['Bad Kit!', '../x', 'Deployer', '', 'deployer-']) {
      const refused = await store({ kitId, credentials: { token: SECRET } });
      expect([kitId, refused.status, refused.body.error?.code, refused.body.error?.details?.issues?.map((i: { field: string }) => i.field)]).toEqual([kitId, 400, 'VALIDATION_ERROR', ['kitId']]);
      // The execute route's path segment takes the same ids.
      const execute = await call(app.url, `/api/${orgId}/kits/${encodeURIComponent(kitId)}/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
      if (kitId !== '') expect([kitId, execute.status, execute.body.error?.details?.issues?.map((i: { field: string }) => i.field)]).toEqual([kitId, 400, ['kitId']]);
      // An empty query value is an absent one on this surface (`?projectId=` too): no filter.
      for (const list of kitId === '' ? [] : [base(), `/api/${orgId}/kits/executions`]) {
        const listed = await call(app.url, `${list}?kitId=${encodeURIComponent(kitId)}`, { apiKey: key });
        expect([list, kitId, listed.status, listed.body.error?.details?.issues?.map((i: { field: string }) => i.field)]).toEqual([list, kitId, 400, ['kitId']]);
      }
    }
    expect(await countRows(app.database.ownerUrl, 'kit_credentials')).toBe(stored);
    expect((await call(app.url, `${base()}?kitId=deployer`, { apiKey: key })).status).toBe(200);
  });

  it('are deleted on request', async () => {
    const deleted = await call(app.url, `${base()}/${credentialId.toUpperCase()}`, { method: 'DELETE', apiKey: key });
    expect(deleted.body.data).toEqual({ credentialId, deleted: true });
    expect((await call(app.url, `${base()}/${credentialId}`, { method: 'DELETE', apiKey: key })).status).toBe(404);
  });

  it("keep the kit's log lines with the execution, secrets redacted", async () => {
    const loggingApply = `
      function apply(context, kit) {
        kit.log('info', 'deploying with ' + context.credentials.deploy.token);
        kit.log('warn', 'second line');
        return { applied: true };
      }`;
    const kit = sampleKit({ id: 'chatty-deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook: loggingApply });
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
    expect((await call(app.url, base(), { apiKey: key, body: { projectId, kitId: 'chatty-deployer', credentialType: 'deploy', credentials: { token: SECRET } } })).status).toBe(201);
    const started = await call(app.url, `/api/${orgId}/kits/chatty-deployer/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    const execution = await waitForExecution(app.url, key, orgId, started.body.data.executionId);
    expect(execution.status, execution.errorMessage).toBe('completed');
    expect(execution.logs).toEqual(
      expect.arrayContaining([
        { phase: 'APPLY', level: 'info', message: 'deploying with [redacted]' },
        { phase: 'APPLY', level: 'warn', message: 'second line' },
      ]),
    );
  });

  it('show what APPLY returned, a secret in it redacted, and leave out one too large to keep, saying so', async () => {
    const returningApply = `
      function apply(context) {
        if (context.input.discoveryAnswers.database === 'huge') return { filler: 'x'.repeat(70000) };
        return { deployed: true, usedToken: context.credentials.deploy.token, at: 'https://deploy.example/1' };
      }`;
    const kit = sampleKit({ id: 'reporting-deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook: returningApply });
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
    expect((await call(app.url, base(), { apiKey: key, body: { projectId, kitId: 'reporting-deployer', credentialType: 'deploy', credentials: { token: SECRET } } })).status).toBe(201);
    const runWith = async (database: string) => {
      const body = sampleExecutionBody(projectId);
      const started = await call(app.url, `/api/${orgId}/kits/reporting-deployer/execute`, { apiKey: key, body: { ...body, discoveryAnswers: { ...body.discoveryAnswers, database } } });
      return waitForExecution(app.url, key, orgId, started.body.data.executionId);
    };
    const execution = await runWith('postgres');
    expect(execution.status, execution.errorMessage).toBe('completed');
    expect(execution.applyResult).toEqual({ deployed: true, usedToken: '[redacted]', at: 'https://deploy.example/1' });

    const huge = await runWith('huge');
    expect(huge.status, huge.errorMessage).toBe('completed');
    expect(huge.applyResult).toBeNull();
    expect(huge.logs).toContainEqual({ phase: 'APPLY', level: 'warn', message: expect.stringMatching(/^what APPLY returned was not kept: \d+ bytes of JSON, over the 65536 kept$/) });
  });

  it('never show a secret in a response, a log line or a job payload', async () => {
    for (const secret of [SECRET, CLIENT_SECRET]) {
      expect(recordedResponses.filter((r) => r.text.includes(secret)).map((r) => r.path)).toEqual([]);
      expect(app.rawLog.filter((line) => line.includes(secret))).toEqual([]);
    }
    const payloads = await sqlAsOwner(`select payload::text from graphile_worker._private_jobs`);
    expect(payloads.filter((p) => p.payload.includes('ghp_') || p.payload.includes(CLIENT_SECRET))).toEqual([]);
  });
});
