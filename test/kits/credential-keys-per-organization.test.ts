import { randomUUID } from 'node:crypto';
import pg from 'pg';
import sodium from 'libsodium-wrappers';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredentialKey, createCredentialKeyMaker } from '../../control-plane/domains/kit-credentials/credential-key-ring.ts';
import { createPublicCredentialSealer } from '../../kit-runtime/index.ts';
import { call, type ApiResponse } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';

/**
 * Each organization's clients seal credentials to a key of its own. A value a client sealed for one
 * organization and stored by another — of another tenant, or of the same one — reaches no kit: the
 * API cannot look inside it, but the worker opens an organization's credentials with that
 * organization's keys only, so the run fails as "could not be opened" and the row is marked invalid.
 */
const VICTIM_SECRET = 'victim-deploy-token-value-0451';

interface Org {
  orgId: string;
  apiKey: string;
  tenantId: string;
  projectId: string;
}

let app: TestApp;
let victim: Org;
let otherTenant: Org;
let sibling: Org;
const sqlAsOwner = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);

// APPLY fails unless the worker opened the credential and handed it over.
const applyHook = `
function apply(context) {
  var token = context.credentials && context.credentials.deploy && context.credentials.deploy.token;
  if (!token || token.length < 20) throw new Error('credential not received');
  return { applied: true };
}
`;

/** Publishes the deployer kit in the organization and makes it a project. */
async function withDeployer(orgId: string, apiKey: string, tenantId: string): Promise<Org> {
  const kit = sampleKit({ id: 'deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook });
  const published = await call(app.url, `/api/${orgId}/kits`, { apiKey, body: kit });
  expect(published.status, published.text).toBe(201);
  const project = await call(app.url, '/api/projects', { apiKey, body: { name: 'Deploys', organizationId: orgId } });
  expect(project.status, project.text).toBe(201);
  return { orgId, apiKey, tenantId, projectId: project.body.data.id };
}

const publicKeyOf = async (org: Pick<Org, 'orgId' | 'apiKey'>) => {
  const response = await call(app.url, `/api/${org.orgId}/kits/credentials/public-key`, { apiKey: org.apiKey });
  expect(response.status, response.text).toBe(200);
  return response.body.data as { keyId: string; key: string };
};
const sealTo = (publicKey: { key: string }, secret: Record<string, unknown>) =>
  sodium.to_base64(sodium.crypto_box_seal(sodium.from_string(JSON.stringify(secret)), sodium.from_base64(publicKey.key, sodium.base64_variants.ORIGINAL)), sodium.base64_variants.ORIGINAL);
const store = (org: Org, sealedCredentials: { keyId: string; ciphertext: string }) =>
  call(app.url, `/api/${org.orgId}/kits/credentials`, { apiKey: org.apiKey, body: { projectId: org.projectId, kitId: 'deployer', credentialType: 'deploy', sealedCredentials } });
const run = async (org: Org) => {
  const started = await call(app.url, `/api/${org.orgId}/kits/deployer/execute`, { apiKey: org.apiKey, body: sampleExecutionBody(org.projectId) });
  expect(started.status, started.text).toBe(201);
  return waitForExecution(app.url, org.apiKey, org.orgId, started.body.data.executionId);
};
const newOrganization = async (slug: string) => {
  const created = await call(app.url, '/api/organizations', { apiKey: app.bootstrap.apiKey, body: { name: slug, slug } });
  expect(created.status, created.text).toBe(201);
  return created.body.data.id as string;
};
const rotateKeys = async () => {
  const before = await countRows(app.database.ownerUrl, 'credential_keys');
  const rotation = await call(app.url, '/api/admin/credential-keys/rotate', { apiKey: app.bootstrap.apiKey, method: 'POST' });
  expect(rotation.status, rotation.text).toBe(202);
  return before;
};
/** Until the rotation job is done (its job row gone). */
const untilRotated = async () => {
  const deadline = Date.now() + 15_000;
  while ((await countRows(app.database.ownerUrl, "graphile_worker.jobs where task_identifier = 'credentials.rotate_keys'")) > 0) {
    if (Date.now() > deadline) throw new Error('rotation did not finish');
    await sleep(100);
  }
};
const currentKeysOf = async (orgId: string) => (await sqlAsOwner('select key_id from credential_keys where organization_id = $1 and retired_at is null', [orgId])).map((row) => row.key_id);

beforeAll(async () => {
  await sodium.ready;
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
  const admin = app.bootstrap.apiKey;
  victim = await withDeployer(app.bootstrap.organizationId, admin, app.bootstrap.tenantId);

  const tenant = await createTenant(app, 'Elsewhere');
  const enabled = await call(app.url, `/api/admin/tenants/${tenant.tenantId}/features`, { apiKey: admin, method: 'PATCH', body: { kits_enabled: true } });
  expect(enabled.status, enabled.text).toBe(200);
  otherTenant = await withDeployer(tenant.organizationId, tenant.apiKey, tenant.tenantId);

  const side = await call(app.url, '/api/organizations', { apiKey: admin, body: { name: 'Sibling', slug: 'sibling' } });
  expect(side.status, side.text).toBe(201);
  sibling = await withDeployer(side.body.data.id, admin, app.bootstrap.tenantId);
});
afterAll(() => app?.stop());

describe('credential keys', () => {
  it('are one per organization, the same each time it is asked', async () => {
    const keys = await Promise.all([victim, otherTenant, sibling].map(publicKeyOf));
    expect(new Set(keys.map((key) => key.keyId)).size).toBe(3);
    expect(new Set(keys.map((key) => key.key)).size).toBe(3);
    expect(await publicKeyOf(victim)).toEqual(keys[0]);
    expect(await currentKeysOf(victim.orgId)).toEqual([keys[0]!.keyId]);
  });

  it("are issued once when an organization's first requests race", async () => {
    const created = await call(app.url, '/api/organizations', { apiKey: app.bootstrap.apiKey, body: { name: 'Racing', slug: 'racing' } });
    expect(created.status, created.text).toBe(201);
    const racing = { orgId: created.body.data.id as string, apiKey: app.bootstrap.apiKey };
    const keys = await Promise.all(Array.from({ length: 6 }, () => publicKeyOf(racing)));
    expect(new Set(keys.map((key) => key.keyId)).size).toBe(1);
    expect(await currentKeysOf(racing.orgId)).toEqual([keys[0]!.keyId]);
  });

  it('are not read or issued for an organization of another tenant', async () => {
    const foreign = await call(app.url, `/api/${victim.orgId}/kits/credentials/public-key`, { apiKey: otherTenant.apiKey });
    expect([foreign.status, foreign.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    expect(foreign.text).not.toContain((await publicKeyOf(victim)).key);
  });

  describe.each([
    ['an organization of another tenant', () => otherTenant],
    ['another organization of the same tenant', () => sibling],
  ])('a value client-sealed for one organization, stored by %s', (_, thief) => {
    it('is refused when sent as sealed, and reaches no kit when relabelled with the thief’s own key id', async () => {
      const victimKey = await publicKeyOf(victim);
      const stolen = sealTo(victimKey, { token: VICTIM_SECRET });
      const before = await countRows(app.database.ownerUrl, 'kit_credentials where organization_id = $1', [thief().orgId]);

      const asSealed = await store(thief(), { keyId: victimKey.keyId, ciphertext: stolen });
      expect([asSealed.status, asSealed.body.error?.code, asSealed.body.error?.details?.issues?.[0]?.field]).toEqual([400, 'VALIDATION_ERROR', 'sealedCredentials.keyId']);
      expect(await countRows(app.database.ownerUrl, 'kit_credentials where organization_id = $1', [thief().orgId])).toBe(before);

      // The API cannot look inside a client-sealed value: stored, it is opened only by the worker.
      const relabelled = await store(thief(), { keyId: (await publicKeyOf(thief())).keyId, ciphertext: stolen });
      expect(relabelled.status, relabelled.text).toBe(201);
      const execution = await run(thief());
      expect([execution.status, execution.errorMessage]).toEqual(['failed', 'APPLY: credential "deploy" could not be opened']);
      const [row] = await sqlAsOwner('select status, last_check_status from kit_credentials where id = $1', [relabelled.body.data.credentialId]);
      expect(row).toEqual({ status: 'invalid', last_check_status: 'failed' });
    });

    it("reaches no kit either when written around the API, naming the victim's key inside the thief's envelope", async () => {
      const victimKey = await publicKeyOf(victim);
      const thiefKey = await publicKeyOf(thief());
      const credentialId = randomUUID();
      const envelope = (await createPublicCredentialSealer(thiefKey)).wrapClientValue(
        { keyId: victimKey.keyId, ciphertext: sealTo(victimKey, { token: VICTIM_SECRET }) },
        { tenantId: thief().tenantId, credentialId },
      );
      await sqlAsOwner(
        `insert into kit_credentials (id, tenant_id, organization_id, project_id, kit_id, credential_type, key_id, sealed, created_by)
         values ($1, $2, $3, $4, 'deployer', 'deploy', $5, $6, (select owner_id from organizations where id = $3))`,
        [credentialId, thief().tenantId, thief().orgId, thief().projectId, envelope.keyId, envelope.ciphertext],
      );
      const execution = await run(thief());
      expect([execution.status, execution.errorMessage]).toEqual(['failed', 'APPLY: credential "deploy" could not be opened']);
      expect((await sqlAsOwner('select status from kit_credentials where id = $1', [credentialId]))[0].status).toBe('invalid');
    });

    it("opens the thief's own value, sealed to its own key", async () => {
      const own = await store(thief(), { keyId: (await publicKeyOf(thief())).keyId, ciphertext: sealTo(await publicKeyOf(thief()), { token: 'the-thiefs-own-token-value' }) });
      expect(own.status, own.text).toBe(201);
      const execution = await run(thief());
      expect(execution.status, execution.errorMessage).toBe('completed');
    });
  });

  it('are never handed out nor opened with when written past the service (through the API role), keep no node from starting, and are replaced at rotation', async () => {
    const orgId = await newOrganization('planted');
    const planted = sodium.crypto_box_keypair();
    const plantedKey = sodium.to_base64(planted.publicKey, sodium.base64_variants.ORIGINAL);
    // What a statement injected into a request could do: the API's role issues the organization a key of its own making.
    const injected = new pg.Client({ connectionString: app.database.appUrl });
    await injected.connect();
    try {
      await injected.query('begin');
      await injected.query(`select set_config('app.tenant_id', $1, true)`, [app.bootstrap.tenantId]);
      await injected.query('select * from app_private.issue_organization_credential_key($1, $2, $3, $4, $5)', [orgId, 'k-planted', plantedKey, 'junk.junk', 'forged']);
      await injected.query('commit');
    } finally {
      await injected.end();
    }
    const org = { orgId, apiKey: app.bootstrap.apiKey };
    const served = await call(app.url, `/api/${orgId}/kits/credentials/public-key`, { apiKey: org.apiKey });
    expect([served.status, served.body.error?.code]).toEqual([500, 'INTERNAL_ERROR']);
    expect(served.text).not.toContain(plantedKey);
    const kit = sampleKit({ id: 'deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook });
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: org.apiKey, body: kit })).status).toBe(201);
    const project = (await call(app.url, '/api/projects', { apiKey: org.apiKey, body: { name: 'Planted', organizationId: orgId } })).body.data.id;
    const stored = await call(app.url, `/api/${orgId}/kits/credentials`, { apiKey: org.apiKey, body: { projectId: project, kitId: 'deployer', credentialType: 'deploy', credentials: { token: VICTIM_SECRET } } });
    expect(stored.status).toBe(500);
    expect(await sqlAsOwner('select id from kit_credentials where organization_id = $1', [orgId])).toEqual([]);

    // The newest key of the ring does not open with SERVER_SECRET; a node still starts.
    const second = await startTestApp({ database: app.database });
    await second.stop();

    await rotateKeys();
    await untilRotated();
    const replaced = await publicKeyOf(org);
    expect(replaced.keyId).not.toBe('k-planted');
    expect(await sqlAsOwner('select retired_at is not null as retired from credential_keys where key_id = $1', ['k-planted'])).toEqual([{ retired: true }]);
  });

  it('leave no credential sealed to a key a rotation retired, when it was stored while the rotation ran', async () => {
    const orgId = await newOrganization('racing-store');
    const org = await withDeployer(orgId, app.bootstrap.apiKey, app.bootstrap.tenantId);
    const first = (await publicKeyOf(org)).keyId;
    // The store reads the key, then waits on its insert; the rotation is asked for meanwhile.
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    let storing: Promise<ApiResponse>;
    try {
      await holder.query('begin');
      await holder.query('lock table kit_credentials in share mode');
      storing = call(app.url, `/api/${orgId}/kits/credentials`, { apiKey: org.apiKey, body: { projectId: org.projectId, kitId: 'deployer', credentialType: 'deploy', credentials: { token: 'stored-during-a-rotation-token' } } });
      await untilLockWaiters(app.database.ownerUrl, 1);
      await rotateKeys();
      // The rotation waits for the store (its key read holds the rotation lock shared) instead of running past it.
      await untilLockWaiters(app.database.ownerUrl, 2);
    } finally {
      await holder.query('commit');
      await holder.end();
    }
    const stored = await storing!;
    expect(stored.status, stored.text).toBe(201);
    await untilRotated();
    const [current] = await currentKeysOf(orgId);
    expect(current).not.toBe(first);
    expect((await sqlAsOwner('select key_id from kit_credentials where id = $1', [stored.body.data.credentialId]))[0].key_id).toBe(current);
    expect((await run(org)).status).toBe('completed');
  });

  it('name, at rotation, the credentials that no longer open and were marked invalid', async () => {
    const orgId = await newOrganization('damaged-at-rotation');
    const org = await withDeployer(orgId, app.bootstrap.apiKey, app.bootstrap.tenantId);
    const stored = await call(app.url, `/api/${orgId}/kits/credentials`, { apiKey: org.apiKey, body: { projectId: org.projectId, kitId: 'deployer', credentialType: 'deploy', credentials: { token: 'a-token-that-will-be-damaged' } } });
    expect(stored.status, stored.text).toBe(201);
    const { credentialId } = stored.body.data;
    // Its sealed value damaged past the service: it opens no more.
    await sqlAsOwner("update kit_credentials set sealed = reverse(sealed) where id = $1", [credentialId]);

    const linesBefore = app.logLines.length;
    await rotateKeys();
    await untilRotated();
    expect(await sqlAsOwner('select status from kit_credentials where id = $1', [credentialId])).toEqual([{ status: 'invalid' }]);
    const lines = app.logLines.slice(linesBefore);
    // Other organizations of this file hold credentials that never opened: each is named under its own.
    const named = lines.filter((line) => /marked invalid at key rotation/.test(String(line.msg)));
    expect(named.filter((line) => line.organizationId === orgId)).toEqual([expect.objectContaining({ level: 40, credentialIds: [credentialId] })]);
    const invalidated = named.flatMap((line) => line.credentialIds as string[]).length;
    expect(lines.find((line) => line.msg === 'credential keys rotated')).toMatchObject({ invalidated });
    expect(JSON.stringify(lines)).not.toContain('a-token-that-will-be-damaged');
  });

  it('still open what was sealed to a server-wide key of before, and move it under its organization’s key at rotation', async () => {
    // A key and a client-sealed credential as an earlier version stored them: the key of no organization.
    const legacyKeyId = await addCredentialKey(app.service.owner.db, createCredentialKeyMaker(TEST_SERVER_SECRET), null);
    await sqlAsOwner("update credential_keys set created_at = now() - interval '1 day' where key_id = $1", [legacyKeyId]);
    const [legacy] = await sqlAsOwner('select public_key from credential_keys where key_id = $1', [legacyKeyId]);
    const sealer = await createPublicCredentialSealer({ keyId: legacyKeyId, key: legacy.public_key });
    const credentialId = randomUUID();
    const sealed = sealer.wrapClientValue({ keyId: legacyKeyId, ciphertext: sealTo({ key: legacy.public_key }, { token: VICTIM_SECRET }) }, { tenantId: victim.tenantId, credentialId });
    await sqlAsOwner(
      `insert into kit_credentials (id, tenant_id, organization_id, project_id, kit_id, credential_type, key_id, sealed, created_by)
       values ($1, $2, $3, $4, 'deployer', 'deploy', $5, $6, (select owner_id from organizations where id = $3))`,
      [credentialId, victim.tenantId, victim.orgId, victim.projectId, legacyKeyId, sealed.ciphertext],
    );
    expect((await run(victim)).status).toBe('completed');

    await rotateKeys();
    await untilRotated();
    const [moved] = await sqlAsOwner('select key_id from kit_credentials where id = $1', [credentialId]);
    expect(await currentKeysOf(victim.orgId)).toEqual([moved.key_id]);
    expect(await publicKeyOf(victim)).toMatchObject({ keyId: moved.key_id });
    expect(await sqlAsOwner('select retired_at is not null as retired from credential_keys where key_id = $1', [legacyKeyId])).toEqual([{ retired: true }]);
    // Every organization keeps exactly one current key.
    for (const org of [victim, otherTenant, sibling]) expect(await currentKeysOf(org.orgId)).toHaveLength(1);
    expect((await run(victim)).status).toBe('completed');
  });
});
