import { beforeAll, describe, expect, it } from 'vitest';
import { asAppRoleInTenant, inAppRoleTransaction } from '../helpers/app-role-sql.ts';
import { insertTenantWithUser, ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * app_private.enqueue_job is the app role's only way into graphile-worker, and runs as the owner.
 * It passed on whatever it was given: any task, any job key, any run_at and priority. A job key
 * names the job it replaces (graphile-worker's default job_key_mode), and an execution's key is
 * `kit-execution:<execution id>`: tenant A's request could replace tenant B's waiting execution job.
 */
let database: TestDatabase;
let a: { tenantId: string; userId: string };
let b: { tenantId: string; userId: string };
const bExecutionId = '00000000-0000-4000-8000-0000000000b1';

const jobs = () =>
  ownerQuery(database.ownerUrl, `select t.identifier, j.key, j.run_at = 'infinity' as never_runs from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id order by j.id`);

beforeAll(async () => {
  database = await createTestDatabase();
  a = await insertTenantWithUser(database.ownerUrl, 'a@a.test');
  b = await insertTenantWithUser(database.ownerUrl, 'b@b.test');
  // B's execution job, as B's request enqueued it (the execution row itself is beside the point here).
  await ownerQuery(database.ownerUrl, `select app_private.enqueue_job('kits.execute', $1::json, $2, 8, null, 0)`, [
    JSON.stringify({ executionId: bExecutionId, tenantId: b.tenantId }),
    `kit-execution:${bExecutionId}`,
  ]);
});

/** Runs `text` as the app role in a committed transaction of `tenantId`. */
async function committedInTenant(tenantId: string, text: string, values: unknown[] = []): Promise<void> {
  await inAppRoleTransaction(database.appUrl, tenantId, (client) => client.query(text, values), { commit: true });
}

describe("a request's enqueue_job", () => {
  it("cannot replace another tenant's waiting job by naming its key", async () => {
    const before = await jobs();
    expect(before).toEqual([{ identifier: 'kits.execute', key: `kit-execution:${bExecutionId}`, never_runs: false }]);
    await committedInTenant(a.tenantId, `select app_private.enqueue_job('maintenance.prune_worker_heartbeats', '{}', $1, 1, 'infinity', 32767)`, [
      `kit-execution:${bExecutionId}`,
    ]).catch(() => {});
    // Before the fix: [{ identifier: 'maintenance.prune_worker_heartbeats', key: 'kit-execution:…', never_runs: true }].
    expect(await jobs()).toEqual(before);
  });

  it("cannot enqueue a job of another tenant's execution, nor one no request enqueues", async () => {
    const payload = JSON.stringify({ executionId: bExecutionId, tenantId: b.tenantId });
    expect(await asAppRoleInTenant(database.appUrl, a.tenantId, `select app_private.enqueue_job('kits.execute', $1::json, null, 8, null, 0)`, [payload])).toBe('42501');
    expect(await asAppRoleInTenant(database.appUrl, a.tenantId, `select app_private.enqueue_job('kits.reap_interrupted_executions', '{}')`)).toBe('42501');
    // A platform admin's action (tenants.router.ts), which the database cannot tell from a plain user's request
    // unless it checks that the requester named is a platform admin.
    expect(
      await asAppRoleInTenant(database.appUrl, a.tenantId, `select app_private.enqueue_job('credentials.rotate_keys', $1::json, 'credentials.rotate_keys', 3)`, [
        JSON.stringify({ requestedBy: a.userId }),
      ]),
    ).toBe('42501');
  });
});
