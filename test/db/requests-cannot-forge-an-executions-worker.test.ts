import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reapInterruptedExecutions } from '../../control-plane/domains/kit-executions/kit-execution-reaper.job.ts';
import { createDatabase, type DatabaseHandle } from '../../control-plane/db/kysely-client.ts';
import { createLogger } from '../../control-plane/logger.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * 0007 took heartbeats out of the app role's reach: "a forged stale heartbeat naming a live worker's
 * pool would have the reaper release that worker's jobs". An execution row carries the same names
 * (worker_process_id, locked_by, status), and the app role may update every column of its tenant's
 * executions, and read every live pool's id from worker_heartbeats. An execution of A marked running
 * by a worker with no heartbeat, locked by a live worker's pool, has the reaper force-unlock every
 * job that live worker holds, other tenants' included: each then runs a second time at once.
 */
let database: TestDatabase;
let owner: DatabaseHandle;
let tenantA: string;
let executionOfA: string;
let jobOfB: string;

beforeAll(async () => {
  database = await createTestDatabase();
  owner = createDatabase(database.ownerUrl);
  const q = (text: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, text, values);
  const [t] = await q(`insert into tenants (name) values ('a') returning id`);
  const [u] = await q(`insert into users (tenant_id, email, name) values ($1, 'a@a.test', 'A') returning id`, [t.id]);
  const [o] = await q(`insert into organizations (tenant_id, name, slug, owner_id) values ($1, 'a', 'a', $2) returning id`, [t.id, u.id]);
  const [p] = await q(`insert into projects (tenant_id, organization_id, name) values ($1, $2, 'P') returning id`, [t.id, o.id]);
  const [k] = await q(`insert into kits (kit_id, display_name, kit_type, platform_name, platform_category) values ('built-in', 'B', 'file', 'p', 'c') returning id`);
  const [v] = await q(`insert into kit_versions (kit_row_id, version, manifest, files, checksum) values ($1, '1.0.0', '{}', '{}', 'x') returning id`, [k.id]);
  const [e] = await q(`insert into kit_executions (tenant_id, organization_id, project_id, kit_row_id, kit_version_id, input) values ($1, $2, $3, $4, $5, '{}') returning id`, [t.id, o.id, p.id, k.id, v.id]);
  tenantA = t.id;
  executionOfA = e.id;
  // A live worker (fresh heartbeat) holding another tenant's job.
  const [job] = await q(`select (graphile_worker.add_job('kits.execute', '{}'::json, job_key => 'kit-execution:of-tenant-b')).id::text as id`);
  jobOfB = job.id;
  await q(`update graphile_worker._private_jobs set locked_by = 'pool-live', locked_at = now() where id = $1`, [jobOfB]);
  await q(`insert into worker_heartbeats (worker_id, last_seen_at, job_pool_id) values ('worker-live', now(), 'pool-live')`);
});
afterAll(async () => {
  await owner?.db.destroy();
});

describe("a request's reach into an execution's worker columns", () => {
  it("cannot have the reaper release a live worker's jobs", async () => {
    const app = createDatabase(database.appUrl, { max: 1 });
    try {
      await app.db.transaction().execute(async (trx) => {
        await sql`select set_config('app.tenant_id', ${tenantA}, true)`.execute(trx);
        await sql`update kit_executions
                     set status = 'running', started_at = now(), worker_process_id = 'gone', worker_run_id = null,
                         locked_by = (select job_pool_id from worker_heartbeats where job_pool_id is not null limit 1)
                   where id = ${executionOfA}`.execute(trx);
      });
    } catch {
      // Refused (the fix): nothing forged.
    } finally {
      await app.db.destroy();
    }
    await reapInterruptedExecutions({ ownerDb: owner.db, log: createLogger('silent'), workerStaleAfterMs: 5_000 });
    const [job] = await ownerQuery(database.ownerUrl, 'select locked_by from graphile_worker._private_jobs where id = $1', [jobOfB]);
    // Before the fix: null — the live worker's job of tenant B was released, to run twice.
    expect(job.locked_by).toBe('pool-live');
  });
});
