import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { publishDeployerWithCredential, sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * An execution runs on the authority of whoever started it. Removing the member, or revoking the
 * API key they started it with, takes that back at once: an execution left queued, or whose APPLY
 * had yet to open its credential, does not run on the organization's credentials. It ends failed,
 * saying why. Runs of members who stay, started with keys still in use, go on as before.
 */
let api: TestApp;
let worker: TestApp | undefined;
let ownerKey: string;
let orgId: string;
let deployer: Awaited<ReturnType<typeof publishDeployerWithCredential>>;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, sql, values);

/** A user of the tenant, added to the organization as a member. */
async function member(name: string): Promise<Actor> {
  const user = await createUserInTenant(api, sqlAsOwner, api.bootstrap.tenantId, name);
  const added = await call(api.url, `/api/organizations/${orgId}/members`, { apiKey: ownerKey, body: { userId: user.userId, role: 'member' } });
  expect(added.status, added.text).toBe(201);
  return user;
}

async function execute(apiKey: string, kitId: string, projectId: string): Promise<string> {
  const started = await call(api.url, `/api/${orgId}/kits/${kitId}/execute`, { apiKey, body: sampleExecutionBody(projectId) });
  expect(started.status, started.text).toBe(201);
  return started.body.data.executionId;
}

/** A second API key of `user`'s, and a way to revoke it (with their first). */
async function secondKeyOf(user: Actor) {
  const created = await call(api.url, '/api/developer/api-keys', { apiKey: user.apiKey, body: { name: 'second' } });
  expect(created.status, created.text).toBe(201);
  const revoke = async () => {
    const revoked = await call(api.url, `/api/developer/api-keys/${created.body.data.id}`, { method: 'DELETE', apiKey: user.apiKey });
    expect(revoked.status, revoked.text).toBe(200);
  };
  return { key: created.body.data.key as string, revoke };
}

async function removeMember(userId: string) {
  const removed = await call(api.url, `/api/organizations/${orgId}/members/${userId}`, { method: 'DELETE', apiKey: ownerKey });
  expect(removed.status, removed.text).toBe(200);
}

/** When the stored credential of `kitId` was last opened for a run (null: never). */
async function credentialLastOpened(kitId: string, projectId: string) {
  const listed = await call(api.url, `/api/${orgId}/kits/credentials?projectId=${projectId}&kitId=${kitId}`, { apiKey: ownerKey });
  expect(listed.status, listed.text).toBe(200);
  expect(listed.body.data.credentials).toHaveLength(1);
  return listed.body.data.credentials[0].lastCheckedAt;
}

const finishedRuns = (executionId: string) => worker!.logLines.filter((line) => line.msg === 'kit execution finished' && line.executionId === executionId);

// Busy long enough for the member to be removed before APPLY, which needs the credential.
const slowDeployer = sampleKit({
  id: 'slow-deployer',
  credentials: [{ id: 'deploy', description: 'Deploy token', required: true }],
  applyHook: 'function apply(context) { if (!context.credentials.deploy) throw new Error("credential not received"); return { applied: true }; }',
});
slowDeployer.files['hooks/spec.js'] = 'function spec() { var until = Date.now() + 1500; while (Date.now() < until) {} return { image: "x" }; }';

beforeAll(async () => {
  // No worker yet: executions wait in the queue.
  api = await startTestApp({ mode: 'api' });
  ownerKey = api.bootstrap.apiKey;
  orgId = api.bootstrap.organizationId;
  deployer = await publishDeployerWithCredential(api.url, ownerKey, orgId, 'deploy-token-for-members');
  expect((await call(api.url, `/api/${orgId}/kits`, { apiKey: ownerKey, body: slowDeployer })).status).toBe(201);
  const stored = await call(api.url, `/api/${orgId}/kits/credentials`, {
    apiKey: ownerKey,
    body: { projectId: deployer.projectId, kitId: 'slow-deployer', credentialType: 'deploy', credentials: { token: 'slow-deploy-token' } },
  });
  expect(stored.status, stored.text).toBe(201);
});
afterAll(async () => {
  await worker?.stop();
  await api?.stop();
});

let keyRevoker: Actor;

describe('executions left queued', () => {
  it('end failed without running or opening a credential once the member is removed, or the key they were started with revoked', async () => {
    const removed = await member('Removed');
    const byRemoved = await execute(removed.apiKey, 'deployer', deployer.projectId);
    // The other is waiting for its retry: an earlier attempt claimed it and could not record its outcome.
    const retrying = await execute(removed.apiKey, 'deployer', deployer.projectId);
    await sqlAsOwner(`update kit_executions set status = 'running', started_at = now() where id = $1`, [retrying]);
    await sqlAsOwner(`update graphile_worker._private_jobs set attempts = 1 where id = (select worker_run_id::bigint from kit_executions where id = $1)`, [retrying]);
    await removeMember(removed.userId);
    keyRevoker = await member('Key revoker');
    const revokedKey = await secondKeyOf(keyRevoker);
    const byRevokedKey = await execute(revokedKey.key, 'deployer', deployer.projectId);
    await revokedKey.revoke();

    worker = await startTestApp({ mode: 'worker', database: api.database, env: { WORKER_HEARTBEAT_MS: '500' } });
    const said = {
      [byRemoved]: 'did not run',
      [retrying]: 'was stopped before its retry: an earlier attempt may have run part of it, and none of its outputs were kept',
    };
    for (const executionId of [byRemoved, retrying]) {
      const execution = await waitForExecution(api.url, ownerKey, orgId, executionId);
      expect(execution).toMatchObject({ status: 'failed', outputCount: 0, phases: [], logs: [], bundleStatus: 'none' });
      expect(execution.errorMessage).toBe(`Whoever started this execution is no longer a member of its organization, so this execution ${said[executionId]}. A member can start a new execution.`);
      expect(finishedRuns(executionId)).toEqual([]);
    }
    const byKey = await waitForExecution(api.url, ownerKey, orgId, byRevokedKey);
    expect(byKey).toMatchObject({ status: 'failed', outputCount: 0, phases: [], logs: [], bundleStatus: 'none' });
    expect(byKey.errorMessage).toBe('The API key this execution was started with has been revoked, so this execution did not run. Start a new execution with a key in use.');
    expect(finishedRuns(byRevokedKey)).toEqual([]);
    // Ended, not left to retry.
    expect(await sqlAsOwner(`select id from graphile_worker.jobs where key = any($1)`, [[byRemoved, retrying, byRevokedKey].map((id) => `kit-execution:${id}`)])).toEqual([]);
    expect(await credentialLastOpened('deployer', deployer.projectId)).toBeNull();
  });

  it('of a member still in the organization, with a key still in use, run as before, opening the credential', async () => {
    // The member whose other key was revoked: this one still works, and so do its runs.
    const executionId = await execute(keyRevoker.apiKey, 'deployer', deployer.projectId);
    expect((await waitForExecution(api.url, ownerKey, orgId, executionId)).status).toBe('completed');
    expect(await credentialLastOpened('deployer', deployer.projectId)).toEqual(expect.any(String));
  });
});

/** Starts a run of the slow deployer with `apiKey`, and answers its id once a worker has claimed it. */
async function slowRunClaimed(apiKey: string): Promise<string> {
  const executionId = await execute(apiKey, 'slow-deployer', deployer.projectId);
  const deadline = Date.now() + 10_000;
  while ((await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status === 'pending' && Date.now() < deadline) await sleep(20);
  return executionId;
}

/** The run ended failed, saying `why`, at APPLY (which got no credential), with no outputs kept and the credential never opened. */
async function expectStoppedAtApply(executionId: string, why: string) {
  const execution = await waitForExecution(api.url, ownerKey, orgId, executionId);
  expect(execution).toMatchObject({ status: 'failed', outputCount: 0 });
  expect(execution.errorMessage).toBe(why);
  expect(execution.phases.map((phase: { phase: string; status: string }) => `${phase.phase} ${phase.status}`)).toContain('APPLY failed');
  expect(await credentialLastOpened('slow-deployer', deployer.projectId)).toBeNull();
  expect(await sqlAsOwner('select count(*)::int as n from kit_outputs where execution_id = $1', [executionId])).toEqual([{ n: 0 }]);
}

describe('an execution whose authority is withdrawn while it runs', () => {
  it('opens no credential once the member is removed: APPLY gets none, and the run ends failed keeping no outputs', async () => {
    const leaving = await member('Leaving');
    const executionId = await slowRunClaimed(leaving.apiKey);
    await removeMember(leaving.userId);
    await expectStoppedAtApply(
      executionId,
      'Whoever started this execution stopped being a member of its organization while it ran, so no credential was opened for it after that and none of its outputs were kept. A member can start a new execution.',
    );
  });

  it('opens no credential once the key it was started with is revoked', async () => {
    const secondKey = await secondKeyOf(await member('Revoking while running'));
    const executionId = await slowRunClaimed(secondKey.key);
    await secondKey.revoke();
    await expectStoppedAtApply(
      executionId,
      'The API key this execution was started with was revoked while it ran, so no credential was opened for it after that and none of its outputs were kept. Start a new execution with a key in use.',
    );
  });

  it('of a member who stays, with a key still in use, goes through APPLY with the credential', async () => {
    const executionId = await execute(ownerKey, 'slow-deployer', deployer.projectId);
    expect((await waitForExecution(api.url, ownerKey, orgId, executionId)).status).toBe('completed');
    expect(await credentialLastOpened('slow-deployer', deployer.projectId)).toEqual(expect.any(String));
  });
});

const LEFT_WHILE_RUNNING =
  'Whoever started this execution stopped being a member of its organization while it ran, so no credential was opened for it after that and none of its outputs were kept. A member can start a new execution.';

/** A connection of the owner's with a transaction open, for holding locks the worker runs into. */
async function lockHolder() {
  const client = new pg.Client({ connectionString: api.database.ownerUrl });
  await client.connect();
  await client.query('begin');
  return {
    query: (text: string, values: unknown[] = []) => client.query(text, values),
    release: async () => {
      await client.query('rollback');
      await client.end();
    },
  };
}

/** The process id of the one backend waiting for a lock in a statement starting with `statement`. */
async function backendWaitingIn(statement: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const waiting = await sqlAsOwner(`select pid from pg_stat_activity where wait_event_type = 'Lock' and query like $1`, [`${statement}%`]);
    if (waiting.length === 1) return waiting[0].pid;
    if (Date.now() > deadline) throw new Error(`no backend waits in ${statement} (${waiting.length} found)`);
    await sleep(20);
  }
}

describe('an execution whose authority is withdrawn at the edges of a credential open', () => {
  it('gets no credential whose opening the removal overtook: it ends failed, having been handed none', async () => {
    const leaving = await member('Removed while the credential opens');
    // The credential's open waits, as it records its check, for this lock: the member is removed meanwhile.
    const holder = await lockHolder();
    try {
      await holder.query(`select id from kit_credentials where kit_id = 'slow-deployer' for update`);
      const executionId = await execute(leaving.apiKey, 'slow-deployer', deployer.projectId);
      await backendWaitingIn('update "kit_credentials"');
      await removeMember(leaving.userId);
      await holder.release();
      const execution = await waitForExecution(api.url, ownerKey, orgId, executionId);
      expect(execution).toMatchObject({ status: 'failed', outputCount: 0, applyResult: null });
      expect(execution.errorMessage).toBe(LEFT_WHILE_RUNNING);
      expect(execution.phases.map((phase: { phase: string; status: string }) => `${phase.phase} ${phase.status}`)).toContain('APPLY failed');
    } finally {
      await holder.release().catch(() => {});
    }
  });

  it('is run again when the database fails the authority check, as when it fails the open itself', async () => {
    const staying = await member('Checked as the database fails');
    const executionId = await slowRunClaimed(staying.apiKey);
    // The check at claim is done; the one APPLY's credential asks for is cancelled.
    await sleep(300);
    const holder = await lockHolder();
    try {
      await holder.query('lock table organization_members in access exclusive mode');
      // Cancelled, as a statement past DATABASE_STATEMENT_TIMEOUT_MS is: passing trouble (57014).
      await sqlAsOwner('select pg_cancel_backend($1)', [await backendWaitingIn('select * from "organization_members"')]);
    } finally {
      await holder.release();
    }
    const execution = await waitForExecution(api.url, ownerKey, orgId, executionId, 30_000);
    expect(execution.errorMessage).toBeNull();
    expect(execution.status).toBe('completed');
    expect(worker!.logLines.some((line) => line.executionId === executionId && String(line.msg).startsWith('a credential could not be opened for a reason of the server'))).toBe(true);
  });

  it('ends failed keeping no outputs when the member is removed while it runs with no credential left to open', async () => {
    const slowMaker = sampleKit({ id: 'slow-maker' });
    slowMaker.files['hooks/spec.js'] = slowDeployer.files['hooks/spec.js']!;
    expect((await call(api.url, `/api/${orgId}/kits`, { apiKey: ownerKey, body: slowMaker })).status).toBe(201);
    const leaving = await member('Leaving a run that needs no credential');
    const executionId = await execute(leaving.apiKey, 'slow-maker', deployer.projectId);
    const deadline = Date.now() + 10_000;
    while ((await sqlAsOwner('select status from kit_executions where id = $1', [executionId]))[0].status === 'pending' && Date.now() < deadline) await sleep(20);
    await removeMember(leaving.userId);
    const execution = await waitForExecution(api.url, ownerKey, orgId, executionId);
    expect(execution).toMatchObject({ status: 'failed', outputCount: 0, bundleStatus: 'none' });
    expect(execution.errorMessage).toBe(LEFT_WHILE_RUNNING);
    expect(await sqlAsOwner('select count(*)::int as n from kit_outputs where execution_id = $1', [executionId])).toEqual([{ n: 0 }]);
  });
});

describe('a member removed and added again', () => {
  it('does not get back the runs the removal stopped: one left queued ends failed without running', async () => {
    await worker!.stop();
    worker = undefined;
    const rejoining = await member('Rejoining');
    const executionId = await execute(rejoining.apiKey, 'deployer', deployer.projectId);
    await removeMember(rejoining.userId);
    const added = await call(api.url, `/api/organizations/${orgId}/members`, { apiKey: ownerKey, body: { userId: rejoining.userId, role: 'member' } });
    expect(added.status, added.text).toBe(201);

    worker = await startTestApp({ mode: 'worker', database: api.database, env: { WORKER_HEARTBEAT_MS: '500' } });
    const execution = await waitForExecution(api.url, ownerKey, orgId, executionId);
    expect(execution).toMatchObject({ status: 'failed', outputCount: 0, phases: [] });
    expect(execution.errorMessage).toBe('Whoever started this execution is no longer a member of its organization, so this execution did not run. A member can start a new execution.');
    expect(finishedRuns(executionId)).toEqual([]);
    // What they start as a member again runs.
    const again = await execute(rejoining.apiKey, 'deployer', deployer.projectId);
    expect((await waitForExecution(api.url, ownerKey, orgId, again)).status).toBe('completed');
  });
});
