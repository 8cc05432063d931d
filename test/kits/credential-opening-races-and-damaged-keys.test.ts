import { randomUUID } from 'node:crypto';
import pg from 'pg';
import sodium from 'libsodium-wrappers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredentialKey, createCredentialKeyMaker } from '../../control-plane/domains/kit-credentials/credential-key-ring.ts';
import { createCredentialVault } from '../../control-plane/domains/kit-credentials/credential-vault.ts';
import { createPublicCredentialSealer } from '../../kit-runtime/index.ts';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';

/**
 * What a run opens while others change the rows under it: a credential deleted (or replaced) while
 * the worker opens it, one a rotation re-seals meanwhile, and a key whose row was damaged (its
 * sealed private key altered as the owner). Interleavings are forced with locks held from another
 * connection.
 */
const TOKEN = 'race-deploy-token-value-0001';

// APPLY fails unless it received a credential; it names which generation it got.
const applyHook = `
function apply(context) {
  var deploy = context.credentials && context.credentials.deploy;
  if (!deploy || !deploy.token) throw new Error('credential not received');
  if (deploy.generation && deploy.generation !== 'current') throw new Error('stale credential used');
  return { applied: true };
}
`;

let app: TestApp;
const admin = () => app.bootstrap.apiKey;
const sqlAsOwner = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);

type Org = { orgId: string; projectId: string };
async function organization(slug: string): Promise<Org> {
  const created = await call(app.url, '/api/organizations', { apiKey: admin(), body: { name: slug, slug } });
  expect(created.status, created.text).toBe(201);
  const orgId = created.body.data.id as string;
  const kit = sampleKit({ id: 'deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook });
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: admin(), body: kit })).status).toBe(201);
  const project = await call(app.url, '/api/projects', { apiKey: admin(), body: { name: 'Deploys', organizationId: orgId } });
  expect(project.status, project.text).toBe(201);
  return { orgId, projectId: project.body.data.id };
}
const store = async (org: Org, credentials: Record<string, unknown>) => {
  const stored = await call(app.url, `/api/${org.orgId}/kits/credentials`, { apiKey: admin(), body: { projectId: org.projectId, kitId: 'deployer', credentialType: 'deploy', credentials } });
  expect(stored.status, stored.text).toBe(201);
  return stored.body.data.credentialId as string;
};
const startRun = async (org: Org) => {
  const started = await call(app.url, `/api/${org.orgId}/kits/deployer/execute`, { apiKey: admin(), body: sampleExecutionBody(org.projectId) });
  expect(started.status, started.text).toBe(201);
  return started.body.data.executionId as string;
};
const finished = (org: Org, executionId: string) => waitForExecution(app.url, admin(), org.orgId, executionId);
const statusOf = async (credentialId: string) => (await sqlAsOwner('select status, last_check_status from kit_credentials where id = $1', [credentialId]))[0];

/** Opens a transaction as the owner, runs `hold`, and hands back the client: the caller commits. */
async function holding(hold: (client: pg.Client) => Promise<unknown>): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: app.database.ownerUrl });
  await client.connect();
  await client.query('begin');
  await hold(client);
  return client;
}
const commitAndClose = async (client: pg.Client) => {
  try {
    await client.query('commit');
  } finally {
    await client.end();
  }
};

beforeAll(async () => {
  await sodium.ready;
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
});
afterAll(() => app?.stop());

describe('a credential deleted while a run opens it', () => {
  it('is not handed to the kit once its delete committed: the run finds it gone', async () => {
    const org = await organization('deleted-while-opened');
    const credentialId = await store(org, { token: TOKEN });
    // The worker has opened it and waits to record the check; the delete commits meanwhile.
    const holder = await holding((client) => client.query('select id from kit_credentials where id = $1 for update', [credentialId]));
    let executionId: string;
    try {
      executionId = await startRun(org);
      await untilLockWaiters(app.database.ownerUrl);
      await holder.query('delete from kit_credentials where id = $1', [credentialId]);
    } finally {
      await commitAndClose(holder);
    }
    const execution = await finished(org, executionId!);
    expect([execution.status, execution.errorMessage]).toEqual(['failed', 'APPLY: required credential "deploy" is not configured']);
  });

  it('hands the kit the one that replaced it, stored before the delete committed', async () => {
    const org = await organization('replaced-while-opened');
    const old = await store(org, { token: TOKEN, generation: 'old' });
    const holder = await holding((client) => client.query('select id from kit_credentials where id = $1 for update', [old]));
    let executionId: string;
    let replacement: string;
    try {
      executionId = await startRun(org);
      await untilLockWaiters(app.database.ownerUrl);
      replacement = await store(org, { token: TOKEN, generation: 'current' });
      await holder.query('delete from kit_credentials where id = $1', [old]);
    } finally {
      await commitAndClose(holder);
    }
    const execution = await finished(org, executionId!);
    expect(execution.status, execution.errorMessage).toBe('completed');
    expect(await statusOf(replacement!)).toEqual({ status: 'active', last_check_status: 'succeeded' });
  });
});

describe('a credential a rotation re-seals while a run opens it', () => {
  it('is read again, not marked invalid, when the key it was read under is retired meanwhile', async () => {
    const org = await organization('resealed-while-opened');
    const current = (await call(app.url, `/api/${org.orgId}/kits/credentials/public-key`, { apiKey: admin() })).body.data as { keyId: string; key: string };
    // A credential sealed to a server-wide key of before (migration 0021), as an earlier version stored it.
    const legacyKeyId = await addCredentialKey(app.service.owner.db, createCredentialKeyMaker(TEST_SERVER_SECRET), null);
    const [legacy] = await sqlAsOwner('select public_key from credential_keys where key_id = $1', [legacyKeyId]);
    const credentialId = randomUUID();
    const binding = { tenantId: app.bootstrap.tenantId, credentialId };
    const secret = { token: TOKEN };
    const sealed = (await createPublicCredentialSealer({ keyId: legacyKeyId, key: legacy.public_key })).seal(binding, secret);
    await sqlAsOwner(
      `insert into kit_credentials (id, tenant_id, organization_id, project_id, kit_id, credential_type, key_id, sealed, created_by)
       values ($1, $2, $3, $4, 'deployer', 'deploy', $5, $6, (select owner_id from organizations where id = $3))`,
      [credentialId, binding.tenantId, org.orgId, org.projectId, sealed.keyId, sealed.ciphertext],
    );
    // The run has read the row and waits to load the keys; meanwhile a rotation moves the row under
    // the organization's key and retires the server-wide one, as its last step does.
    const holder = await holding((client) => client.query('lock table credential_keys in access exclusive mode'));
    let executionId: string;
    try {
      executionId = await startRun(org);
      await untilLockWaiters(app.database.ownerUrl);
      const resealed = (await createPublicCredentialSealer(current)).seal(binding, secret);
      await holder.query('update kit_credentials set key_id = $2, sealed = $3 where id = $1', [credentialId, resealed.keyId, resealed.ciphertext]);
      await holder.query('update credential_keys set retired_at = now() where key_id = $1', [legacyKeyId]);
    } finally {
      await commitAndClose(holder);
    }
    const execution = await finished(org, executionId!);
    expect(execution.status, execution.errorMessage).toBe('completed');
    expect(await statusOf(credentialId)).toEqual({ status: 'active', last_check_status: 'succeeded' });
  });
});

describe('a credential key whose row was damaged (its sealed private key altered)', () => {
  let damaged: Org;
  let older: string;
  let newer: string;
  let damagedKeyId: string;

  beforeAll(async () => {
    damaged = await organization('damaged-key');
    // The older credential is sealed to the organization's first key; the newer to its next one.
    older = await store(damaged, { token: TOKEN, generation: 'current' });
    await sqlAsOwner('update credential_keys set retired_at = now() where organization_id = $1 and retired_at is null', [damaged.orgId]);
    damagedKeyId = await addCredentialKey(app.service.owner.db, createCredentialKeyMaker(TEST_SERVER_SECRET), damaged.orgId);
    newer = await store(damaged, { token: TOKEN, generation: 'current' });
    expect((await sqlAsOwner('select key_id from kit_credentials where id = $1', [newer]))[0].key_id).toBe(damagedKeyId);
    await sqlAsOwner("update credential_keys set sealed_private_key = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA' where key_id = $1", [damagedKeyId]);
  });

  it('is left out, named in the log: what was sealed to it is marked invalid, and an older credential of the organization still opens', async () => {
    const execution = await finished(damaged, await startRun(damaged));
    expect(execution.status, execution.errorMessage).toBe('completed');
    expect(await statusOf(newer)).toEqual({ status: 'invalid', last_check_status: 'failed' });
    expect(await statusOf(older)).toEqual({ status: 'active', last_check_status: 'succeeded' });
    expect(app.logLines.some((line) => line.level === 50 && (line.keyIds as string[] | undefined)?.includes(damagedKeyId))).toBe(true);
  });

  it('fails the run at once as "could not be opened" when nothing else opens, instead of retrying it for half an hour', async () => {
    await sqlAsOwner('delete from kit_credentials where id = $1', [older]);
    await sqlAsOwner("update kit_credentials set status = 'active' where id = $1", [newer]);
    const execution = await finished(damaged, await startRun(damaged));
    expect([execution.status, execution.errorMessage]).toEqual(['failed', 'APPLY: credential "deploy" could not be opened']);
    expect(await statusOf(newer)).toEqual({ status: 'invalid', last_check_status: 'failed' });
  });

  it('does not stop a rotation: every organization gets a new key, and what opens is re-sealed under it', async () => {
    const healthy = await organization('rotated-past-damage');
    const healthyCredential = await store(healthy, { token: TOKEN, generation: 'current' });
    await sqlAsOwner("update kit_credentials set status = 'active' where id = $1", [newer]);
    const vault = createCredentialVault(app.service.owner.db, TEST_SERVER_SECRET, app.service.log);
    await vault.rotate();
    for (const org of [damaged, healthy]) {
      const current = await sqlAsOwner('select key_id from credential_keys where organization_id = $1 and retired_at is null', [org.orgId]);
      expect(current).toHaveLength(1);
      expect(current[0].key_id).not.toBe(damagedKeyId);
    }
    expect(await statusOf(newer)).toEqual({ status: 'invalid', last_check_status: 'failed' });
    const execution = await finished(healthy, await startRun(healthy));
    expect(execution.status, execution.errorMessage).toBe('completed');
    expect(await statusOf(healthyCredential)).toEqual({ status: 'active', last_check_status: 'succeeded' });
  });

  it('never shows a secret or a private key in a log line', async () => {
    expect(app.rawLog.filter((line) => line.includes(TOKEN))).toEqual([]);
    const privateHalves = await sqlAsOwner('select sealed_private_key from credential_keys');
    for (const { sealed_private_key } of privateHalves) expect(app.rawLog.filter((line) => line.includes(sealed_private_key))).toEqual([]);
  });
});
