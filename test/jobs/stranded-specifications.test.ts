import type { JobHelpers } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type DatabaseHandle } from '../../control-plane/db/kysely-client.ts';
import { failStrandedSpecificationsJob } from '../../control-plane/domains/specifications/fail-stranded-specifications.job.ts';
import type { JobDeps } from '../../control-plane/jobs/job-definition.ts';
import { createLogger } from '../../control-plane/logger.ts';
import { insertTenantWithUser, ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * A specification whose compile job can no longer run (the worker died in the last attempt, or
 * recording the failure failed) would read "compiling" for good: the sweep ends it failed, and
 * leaves alone every one a job may still compile.
 */
let database: TestDatabase;
let owner: DatabaseHandle;
const sql = (text: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, text, values);

beforeAll(async () => {
  database = await createTestDatabase();
  owner = createDatabase(database.ownerUrl);
});
afterAll(() => owner?.db.destroy());

describe('the stranded specifications sweep', () => {
  it('fails those compiling for minutes with no job left to compile them, and only those', async () => {
    const { tenantId } = await insertTenantWithUser(database.ownerUrl, 'sweep@example.test');
    const [project] = await sql(`insert into projects (tenant_id, name) values ($1, 'Swept') returning id`, [tenantId]);
    const specification = async (version: number, age: string) =>
      (await sql(`insert into specifications (tenant_id, project_id, version, options, input, created_at) values ($1, $2, $3, '{}', '{}', now() - $4::interval) returning id`, [tenantId, project.id, version, age]))[0].id as string;
    // Added, then made to look as a worker left it (one statement would not see the row add_job inserts).
    const job = async (id: string, attempts: number, locked: boolean) => {
      const [added] = await sql(
        `select (graphile_worker.add_job('specifications.compile', json_build_object('specificationId', $1::text, 'tenantId', $2::text), job_key => 'specification:' || $1, max_attempts => 3)).id`,
        [id, tenantId],
      );
      await sql(
        `update graphile_worker._private_jobs set attempts = $2, locked_at = case when $3 then now() end, locked_by = case when $3 then 'a-worker' end where id = $1`,
        [added.id, attempts, locked],
      );
      const [row] = await sql('select attempts, locked_by from graphile_worker.jobs where id = $1', [added.id]);
      expect(row).toEqual({ attempts, locked_by: locked ? 'a-worker' : null });
    };

    const noJob = await specification(1, '10 minutes');
    const exhausted = await specification(2, '10 minutes');
    await job(exhausted, 3, false);
    const waiting = await specification(3, '10 minutes');
    await job(waiting, 1, false);
    const lastAttemptRunning = await specification(4, '10 minutes');
    await job(lastAttemptRunning, 3, true);
    const young = await specification(5, '1 minute');

    await failStrandedSpecificationsJob.run({}, { ownerDb: owner.db, log: createLogger('silent') } as unknown as JobDeps, {} as JobHelpers);

    const rows = await sql('select id, status, error_message from specifications where project_id = $1 order by version', [project.id]);
    expect(rows.map((row) => [row.id, row.status])).toEqual([
      [noJob, 'failed'],
      [exhausted, 'failed'],
      [waiting, 'compiling'],
      [lastAttemptRunning, 'compiling'],
      [young, 'compiling'],
    ]);
    expect(rows[0].error_message).toBe('The compile was interrupted; compile the project again');
  });
});
