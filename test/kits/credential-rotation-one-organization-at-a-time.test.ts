import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A key rotation re-seals one organization at a time, each in a transaction of its own: an
 * organization's credentials are locked only while its own are re-sealed. It used to be one
 * transaction holding every credential of every organization until the last was done: 20,000
 * credentials took 7 s, during which no run could open a credential, of any organization.
 */
const applyHook = `
function apply(context) {
  var token = context.credentials && context.credentials.deploy && context.credentials.deploy.token;
  if (!token) throw new Error('credential not received');
  return { applied: true };
}
`;

let app: TestApp;
const admin = () => app.bootstrap.apiKey;
const sqlAsOwner = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);
const currentKeyOf = async (orgId: string) => (await sqlAsOwner('select key_id from credential_keys where organization_id = $1 and retired_at is null', [orgId])).map((row) => row.key_id);

/** An organization with the deployer kit, a project and a stored credential for it. */
async function organizationWithCredential(slug: string) {
  const created = await call(app.url, '/api/organizations', { apiKey: admin(), body: { name: slug, slug } });
  expect(created.status, created.text).toBe(201);
  const orgId = created.body.data.id as string;
  const kit = sampleKit({ id: 'deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook });
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: admin(), body: kit })).status).toBe(201);
  const projectId = (await call(app.url, '/api/projects', { apiKey: admin(), body: { name: 'Deploys', organizationId: orgId } })).body.data.id as string;
  const stored = await call(app.url, `/api/${orgId}/kits/credentials`, { apiKey: admin(), body: { projectId, kitId: 'deployer', credentialType: 'deploy', credentials: { token: `${slug}-deploy-token` } } });
  expect(stored.status, stored.text).toBe(201);
  return { orgId, projectId, credentialId: stored.body.data.credentialId as string };
}

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
});
afterAll(() => app?.stop());

describe('a credential key rotation', () => {
  it('is done with an organization before it waits on the next, whose credentials it alone holds meanwhile', async () => {
    const organizations = [await organizationWithCredential('rotates-first'), await organizationWithCredential('rotates-second')];
    // Organizations rotate in the order of their ids: the last one is held back, the other must be done.
    const rotating = (await sqlAsOwner('select organization_id from credential_keys where organization_id is not null and retired_at is null order by organization_id')).map((row) => row.organization_id as string);
    const [done, held] = [...organizations].sort((a, b) => a.orgId.localeCompare(b.orgId)) as [typeof organizations[0], typeof organizations[0]];
    expect(rotating.at(-1)).toBe(held.orgId);
    const keyBefore = await currentKeyOf(done.orgId);

    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select 1 from credential_keys where organization_id = $1 and retired_at is null for update', [held.orgId]);
      const rotation = await call(app.url, '/api/admin/credential-keys/rotate', { apiKey: admin(), method: 'POST' });
      expect(rotation.status, rotation.text).toBe(202);
      await untilLockWaiters(app.database.ownerUrl, 1);

      // The first organization is rotated and committed while the rotation waits on the second.
      const [keyAfter] = await currentKeyOf(done.orgId);
      expect(keyAfter).not.toBe(keyBefore[0]);
      expect((await sqlAsOwner('select key_id from kit_credentials where id = $1', [done.credentialId]))[0].key_id).toBe(keyAfter);
      // And its credentials open for a run meanwhile (the run records the check on the row).
      const started = await call(app.url, `/api/${done.orgId}/kits/deployer/execute`, { apiKey: admin(), body: sampleExecutionBody(done.projectId) });
      expect(started.status, started.text).toBe(201);
      expect((await waitForExecution(app.url, admin(), done.orgId, started.body.data.executionId, 15_000)).status).toBe('completed');
    } finally {
      await holder.query('commit');
      await holder.end();
    }

    const deadline = Date.now() + 15_000;
    while ((await countRows(app.database.ownerUrl, "graphile_worker.jobs where task_identifier = 'credentials.rotate_keys'")) > 0) {
      if (Date.now() > deadline) throw new Error('rotation did not finish');
      await sleep(100);
    }
    // The held organization was rotated once let go; every organization keeps exactly one current key.
    const [heldKey] = await currentKeyOf(held.orgId);
    expect((await sqlAsOwner('select key_id from kit_credentials where id = $1', [held.credentialId]))[0].key_id).toBe(heldKey);
    for (const org of organizations) expect(await currentKeyOf(org.orgId)).toHaveLength(1);
    expect(await countRows(app.database.ownerUrl, 'credential_keys where organization_id is null and retired_at is null')).toBe(0);
  });
});
