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

/**
 * Migration 0030 lets a request enqueue the compile of a specification of its own tenant, under
 * that specification's key (`specification:<id>`), and leaves the outcome (status, spec,
 * validation) to the worker. The queue is shared by every tenant and a key names the job it
 * replaces; a specification's outcome is what GET /specification/{id} answers.
 */
describe("a request and a specification's compile", () => {
  let aProject: string;
  let aSpecification: string;
  let bSpecification: string;
  const compileJobs = () =>
    ownerQuery(
      database.ownerUrl,
      `select j.key, j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
        where t.identifier = 'specifications.compile' order by j.key`,
    );
  const specificationOf = async (tenantId: string) => {
    const [project] = await ownerQuery(database.ownerUrl, `insert into projects (tenant_id, name, phase) values ($1, 'p', 'DISCOVERY') returning id`, [tenantId]);
    const [specification] = await ownerQuery(
      database.ownerUrl,
      `insert into specifications (tenant_id, project_id, version, options, input) values ($1, $2, 1, '{}', '{}') returning id`,
      [tenantId, project.id],
    );
    return { projectId: project.id as string, specificationId: specification.id as string };
  };
  const enqueueAsA = (payload: unknown, key: string) =>
    committedInTenant(a.tenantId, `select app_private.enqueue_job('specifications.compile', $1::json, $2, 3)`, [JSON.stringify(payload), key]).then(
      () => 'enqueued',
      (error: { code: string }) => error.code,
    );

  beforeAll(async () => {
    ({ projectId: aProject, specificationId: aSpecification } = await specificationOf(a.tenantId));
    ({ specificationId: bSpecification } = await specificationOf(b.tenantId));
    // B's compile, waiting, as B's request enqueued it; and A's own, as A's request enqueues it.
    await committedInTenant(b.tenantId, `select app_private.enqueue_job('specifications.compile', $1::json, $2, 3)`, [
      JSON.stringify({ specificationId: bSpecification, tenantId: b.tenantId }),
      `specification:${bSpecification}`,
    ]);
    expect(await enqueueAsA({ specificationId: aSpecification, tenantId: a.tenantId }, `specification:${aSpecification}`)).toBe('enqueued');
  });

  it("cannot enqueue the compile of another tenant's specification, under another key, or with another payload", async () => {
    const before = await compileJobs();
    expect(before).toEqual([
      { key: `specification:${aSpecification}`, payload: { specificationId: aSpecification, tenantId: a.tenantId } },
      { key: `specification:${bSpecification}`, payload: { specificationId: bSpecification, tenantId: b.tenantId } },
    ].sort((x, y) => x.key.localeCompare(y.key)));
    // B's specification: as B's payload, as A's, and A's specification under B's key or none.
    expect(await enqueueAsA({ specificationId: bSpecification, tenantId: b.tenantId }, `specification:${bSpecification}`)).toBe('42501');
    expect(await enqueueAsA({ specificationId: bSpecification, tenantId: a.tenantId }, `specification:${bSpecification}`)).toBe('42501');
    expect(await enqueueAsA({ specificationId: aSpecification, tenantId: a.tenantId }, `specification:${bSpecification}`)).toBe('42501');
    expect(await enqueueAsA({ specificationId: aSpecification, tenantId: a.tenantId }, `kit-execution:${bExecutionId}`)).toBe('42501');
    // A's own specification under its own key, but a payload the worker cannot take: the id written
    // as PostgreSQL also reads a uuid ({…}), which the job's payload schema refuses, so the attempt
    // fails for good and the specification would stay "compiling" forever; or a payload carrying
    // more than the ids (the input, a secret) into the shared queue. Either would replace A's good job.
    expect(await enqueueAsA({ specificationId: `{${aSpecification}}`, tenantId: a.tenantId }, `specification:${aSpecification}`)).toBe('42501');
    expect(await enqueueAsA({ specificationId: aSpecification, tenantId: a.tenantId, input: { secret: 'sk-live-1' } }, `specification:${aSpecification}`)).toBe('42501');
    // Before the fix, A's job had become { specificationId: '{…}' } and then { …, input: { secret } }.
    expect(await compileJobs()).toEqual(before);
  });

  it("cannot write a specification's outcome: its status, spec, validation or error, nor the input it compiles", async () => {
    const asA = (text: string, values: unknown[] = []) => asAppRoleInTenant(database.appUrl, a.tenantId, text, values);
    // Before the fix each reached its row (1): the default privileges of 0001 grant UPDATE and INSERT on every column.
    expect(await asA(`update specifications set status = 'completed', spec = '{}', validation = '{"passed": true, "errors": [], "warnings": []}', compiled_at = now() where id = $1`, [aSpecification])).toBe('42501');
    expect(await asA(`update specifications set status = 'failed', error_message = 'forged' where id = $1`, [aSpecification])).toBe('42501');
    expect(await asA(`update specifications set input = '{"answers": []}' where id = $1`, [aSpecification])).toBe('42501');
    expect(
      await asA(
        `insert into specifications (tenant_id, project_id, version, options, input, status, spec, validation, compiled_at)
         values ($1, $2, 2, '{}', '{}', 'completed', '{}', '{"passed": true, "errors": [], "warnings": []}', now())`,
        [a.tenantId, aProject],
      ),
    ).toBe('42501');
    // What a request does write: the specification it asks for, compiling.
    expect(await asA(`insert into specifications (tenant_id, project_id, version, options, input) values ($1, $2, 2, '{}', '{}')`, [a.tenantId, aProject])).toBe(1);
  });
});
