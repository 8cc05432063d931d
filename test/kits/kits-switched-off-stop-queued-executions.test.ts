import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { publishDeployerWithCredential, waitForExecution } from '../helpers/kit-fixtures.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A platform admin switching a tenant's kits off stops its executions already queued, or waiting
 * for a retry, when a worker takes them: they end failed, saying why, without running the kit or
 * opening its credentials.
 */
let api: TestApp;
let worker: TestApp | undefined;
let key: string;
let orgId: string;
let deployer: Awaited<ReturnType<typeof publishDeployerWithCredential>>;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, sql, values);
const setKitsEnabled = async (enabled: boolean) => {
  const response = await call(api.url, `/api/admin/tenants/${api.bootstrap.tenantId}/features`, { method: 'PATCH', apiKey: key, body: { kits_enabled: enabled } });
  expect(response.status, response.text).toBe(200);
};
const untilNoExecuteJobs = async () => {
  const deadline = Date.now() + 20_000;
  while ((await countRows(api.database.ownerUrl, `graphile_worker.jobs where task_identifier = 'kits.execute'`)) > 0 && Date.now() < deadline) await sleep(50);
};
const credentialLastChecked = async () => {
  const listed = await call(api.url, `/api/${orgId}/kits/credentials?projectId=${deployer.projectId}`, { apiKey: key });
  expect(listed.status, listed.text).toBe(200);
  return listed.body.data.credentials.find((credential: { id: string }) => credential.id === deployer.credentialId).lastCheckedAt;
};

beforeAll(async () => {
  // No worker yet: executions wait in the queue.
  api = await startTestApp({ mode: 'api' });
  key = api.bootstrap.apiKey;
  orgId = api.bootstrap.organizationId;
  deployer = await publishDeployerWithCredential(api.url, key, orgId, 'deploy-token-for-the-switched-off-tenant');
});
afterAll(async () => {
  await worker?.stop();
  await api?.stop();
});

describe('executions queued when kits are switched off for the tenant', () => {
  it('end failed, saying kits are disabled, without running the kit, opening its credential or being retried', async () => {
    const queued = await deployer.execute();
    // The other waits for its retry: an earlier attempt claimed it and could not record its outcome.
    const retrying = await deployer.execute();
    await sqlAsOwner(`update kit_executions set status = 'running', started_at = now() where id = $1`, [retrying]);
    await sqlAsOwner(`update graphile_worker._private_jobs set attempts = 1 where id = (select worker_run_id::bigint from kit_executions where id = $1)`, [retrying]);
    await setKitsEnabled(false);

    worker = await startTestApp({ mode: 'worker', database: api.database, env: { WORKER_HEARTBEAT_MS: '500' } });
    await untilNoExecuteJobs();

    await setKitsEnabled(true);
    const said = {
      [queued]: 'did not run',
      [retrying]: 'was stopped before its retry: an earlier attempt may have run part of it, and none of its outputs were kept',
    };
    for (const executionId of [queued, retrying]) {
      const execution = await waitForExecution(api.url, key, orgId, executionId, 5_000);
      expect(execution).toMatchObject({ status: 'failed', outputCount: 0, phases: [], logs: [], bundleStatus: 'none' });
      expect(execution.errorMessage).toBe(`Kits are disabled for this tenant (the feature flag kits_enabled is off), so this execution ${said[executionId]}. Start a new execution once kits are enabled again.`);
    }
    // The jobs ended (not left to retry), and the kit never ran.
    expect(await sqlAsOwner(`select id from graphile_worker.jobs where key = any($1)`, [[`kit-execution:${queued}`, `kit-execution:${retrying}`]])).toEqual([]);
    expect(worker.logLines.filter((line) => line.msg === 'kit execution finished')).toEqual([]);
    expect(await credentialLastChecked()).toBeNull();
  });

  it('stay failed when their job runs again', async () => {
    const [failed] = await sqlAsOwner(`select id, status, error_message, completed_at from kit_executions where status = 'failed' order by created_at limit 1`);
    await sqlAsOwner(`select graphile_worker.add_job('kits.execute', json_build_object('executionId', $1::text, 'tenantId', $2::text))`, [failed.id, api.bootstrap.tenantId]);
    await untilNoExecuteJobs();
    expect((await sqlAsOwner('select id, status, error_message, completed_at from kit_executions where id = $1', [failed.id]))[0]).toEqual(failed);
  });

  it('do not stop a run started once kits are enabled again, which opens its credential', async () => {
    const executionId = await deployer.execute();
    expect((await waitForExecution(api.url, key, orgId, executionId)).status).toBe('completed');
    expect(await credentialLastChecked()).toEqual(expect.any(String));
  });
});
