import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inAppRoleTransaction } from '../helpers/app-role-sql.ts';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { until } from '../helpers/until.ts';

/**
 * Compiled specifications against a hostile caller, a failing compile and racing ones: who may
 * compile and read, the compilation budget (5 a minute, the default), what a request can write of
 * a specification, and how the worker's job ends when its project went, when it runs twice and
 * when the compile throws.
 */
let app: TestApp;
let apiKey: string;
let orgId: string;
let tenantId: string;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const post = (path: string, body: unknown, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key, body });
const get = (path: string, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key });
const specificationRows = (projectId: string) => countRows(app.database.ownerUrl, 'specifications where project_id = $1', [projectId]);
const compileJobRows = () => countRows(app.database.ownerUrl, "graphile_worker.jobs where task_identifier = 'specifications.compile'");

/** A project of the bootstrap organization whose flow has started (so it compiles). */
async function startedProject(name: string): Promise<string> {
  const created = await post('/projects', { name, organizationId: orgId, description: 'Online booking for small clinics' });
  expect(created.status, created.text).toBe(201);
  expect((await post('/flow/start', { projectId: created.body.data.id })).status).toBe(200);
  return created.body.data.id;
}

/** A user of the bootstrap tenant with `role` in its organization (or none), with an API key (and so a compile budget) of their own. */
async function userWithRole(name: string, role: 'member' | 'customer' | null): Promise<Actor> {
  const user = await createUserInTenant(app, sqlAsOwner, tenantId, name);
  if (role) await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, $4)`, [tenantId, orgId, user.userId, role]);
  return user;
}

async function settled(specId: string, key = apiKey) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(100)) {
    const response = await get(`/specification/${specId}`, key);
    expect(response.status, response.text).toBe(200);
    if (response.body.data.status !== 'compiling') return response.body.data;
  }
  throw new Error('the specification was still compiling after 60 s');
}

/** A specification row made as the owner (as a request's compile would store it), with the compile job `runAt` (now unless told). */
async function storedSpecification(projectId: string, input: unknown, runAt: string | null = null): Promise<string> {
  const [row] = await sqlAsOwner(
    `insert into specifications (tenant_id, project_id, version, options, input)
     values ($1, $2, (select coalesce(max(version), 0) + 1 from specifications where project_id = $2), $3, $4) returning id`,
    [tenantId, projectId, JSON.stringify({ format: 'v1', includeTestPlan: false, includeTaskGraph: false, includeRunbook: false }), JSON.stringify(input)],
  );
  await enqueueCompile(row.id, runAt);
  return row.id;
}

const enqueueCompile = (specificationId: string, runAt: string | null = null) =>
  sqlAsOwner(`select app_private.enqueue_job('specifications.compile', $1::json, $2, 3, $3::timestamptz)`, [
    JSON.stringify({ specificationId, tenantId }),
    `specification:${specificationId}`,
    runAt,
  ]);

const jobOf = async (specificationId: string) =>
  (await sqlAsOwner(`select id::text, attempts, max_attempts, last_error from graphile_worker._private_jobs where key = $1`, [`specification:${specificationId}`]))[0] as
    | { id: string; attempts: number; max_attempts: number; last_error: string | null }
    | undefined;

beforeAll(async () => {
  // RATE_LIMIT_COMPILATION_PER_MINUTE left at its default (5).
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
  apiKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  tenantId = app.bootstrap.tenantId;
}, 120_000);
afterAll(() => app?.stop());

describe('who compiles and reads a specification', () => {
  it('a non-member of the organization neither compiles nor reads (NOT_FOUND), nor does another tenant; a customer reads only', async () => {
    const projectId = await startedProject('Who reaches it');
    const queued = await post('/specification/compile', { projectId }, (await userWithRole('Compiler', 'member')).apiKey);
    expect(queued.status, queued.text).toBe(202);
    const { specId } = queued.body.data;

    const stranger = await userWithRole('Stranger', null);
    const customer = await userWithRole('Customer', 'customer');
    expect((await post('/agency-projects', { organizationId: orgId, projectId, customerUserId: customer.userId })).status).toBe(201);
    const foreign = await createTenant(app, 'Foreign');
    for (const key of [stranger.apiKey, foreign.apiKey]) {
      const compile = await post('/specification/compile', { projectId }, key);
      expect([compile.status, compile.body.error.code]).toEqual([404, 'NOT_FOUND']);
      const read = await get(`/specification/${specId}`, key);
      expect([read.status, read.body.error.code]).toEqual([404, 'NOT_FOUND']);
      // The answer names nothing of the project.
      expect(read.text).not.toContain('Who reaches it');
    }
    const refused = await post('/specification/compile', { projectId }, customer.apiKey);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await settled(specId, customer.apiKey)).status).toBe('completed');
    expect(await specificationRows(projectId)).toBe(1);
  }, 60_000);

  it('answers the ids it queued, and never the input or options it stored', async () => {
    const projectId = await startedProject('What a response carries');
    const queued = await post('/specification/compile', { projectId }, (await userWithRole('Compiler', 'member')).apiKey);
    expect(Object.keys(queued.body.data).sort()).toEqual(['estimatedTime', 'specId', 'status', 'statusUrl']);
    const read = await settled(queued.body.data.specId);
    expect(Object.keys(read).sort()).toEqual(['compiledAt', 'createdAt', 'errorMessage', 'id', 'projectId', 'spec', 'status', 'validation', 'version']);
  }, 60_000);
});

describe('the compilation budget', () => {
  it('takes five compiles a minute from one caller, REST and tRPC alike; the sixth is 429 and stores and queues nothing; reading is not counted', async () => {
    const projectId = await startedProject('Rate limited');
    const member = await userWithRole('Counted', 'member');
    for (let n = 1; n <= 5; n += 1) {
      const queued = await post('/specification/compile', { projectId }, member.apiKey);
      expect(queued.status, queued.text).toBe(202);
      expect(queued.headers.get('x-ratelimit-limit')).toBe('5');
    }
    await until('the five compiles are done', async () => (await compileJobRows()) === 0, 30_000);
    const before = [await specificationRows(projectId), await compileJobRows()];
    expect(before).toEqual([5, 0]);

    const refused = await post('/specification/compile', { projectId }, member.apiKey);
    expect(refused.status, refused.text).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const viaTrpc = await call(app.url, '/trpc/specification.compile', { apiKey: member.apiKey, body: { projectId } });
    expect(viaTrpc.status, viaTrpc.text).toBe(429);
    expect([await specificationRows(projectId), await compileJobRows()]).toEqual(before);

    // Another caller has a budget of its own; reading the specifications is not a compile.
    const listed = await sqlAsOwner(`select id from specifications where project_id = $1 order by version`, [projectId]);
    expect((await get(`/specification/${listed[0].id}`, member.apiKey)).status).toBe(200);
    const other = await post('/specification/compile', { projectId });
    expect(other.status, other.text).toBe(202);
    expect((await settled(other.body.data.specId)).version).toBe('6');
  }, 90_000);
});

describe("a specification's outcome", () => {
  it("is the worker's: a request cannot pass a failed validation, or mark a specification compiled or failed", async () => {
    const projectId = await startedProject('Outcome forged');
    const compiler = (await userWithRole('Compiler', 'member')).apiKey;
    const queued = await post('/specification/compile', { projectId }, compiler);
    const specId = queued.body.data.specId;
    const honest = await settled(specId);
    // Compiled before discovery: nothing stated, so the validation fails.
    expect(honest.validation.passed).toBe(false);

    // As the app role (what every request runs as), committed: before the fix each of these landed,
    // and GET then answered a validation that passed, or the outcome the request wrote.
    const asRequest = (text: string, values: unknown[]) => inAppRoleTransaction(app.database.appUrl, tenantId, (client) => client.query(text, values), { commit: true }).catch(() => undefined);
    await asRequest(`update specifications set validation = '{"passed": true, "errors": [], "warnings": []}' where id = $1`, [specId]);
    await asRequest(`update specifications set status = 'failed', error_message = 'Forged by a request' where id = $1`, [specId]);
    const forgedCompile = await post('/specification/compile', { projectId }, compiler);
    const forgedId = forgedCompile.body.data.specId;
    // A second compile, still waiting or not: a request cannot decide its outcome either.
    await asRequest(`update specifications set status = 'completed', spec = null, validation = null, compiled_at = now() where id = $1`, [forgedId]);

    expect(await settled(specId)).toEqual(honest);
    const second = await settled(forgedId);
    expect(second).toMatchObject({ status: 'completed', version: '2', validation: { passed: false } });
    expect(second.spec).not.toBeNull();
  }, 60_000);
});

describe("the compile job", () => {
  it('ends the specification failed after its third attempt when the compile throws, with a message that tells nothing of the input', async () => {
    const projectId = await startedProject('Cannot compile');
    // An input the compile cannot take (owner SQL): `answers` is no list. Its secret must reach no answer and no log line.
    const specId = await storedSpecification(projectId, { project: { id: projectId, name: 'sk-live-INPUTSECRET' }, phase: 'DISCOVERY', answers: 'sk-live-INPUTSECRET', unanswered: [] });
    // graphile-worker waits e^attempts seconds between attempts: the test brings each retry forward.
    const hurry = setInterval(() => {
      void sqlAsOwner(`update graphile_worker._private_jobs set run_at = now() where key = $1 and locked_at is null and run_at > now()`, [`specification:${specId}`]).catch(() => {});
    }, 200);
    let failed;
    try {
      failed = await settled(specId);
    } finally {
      clearInterval(hurry);
    }
    expect(failed).toMatchObject({ status: 'failed', spec: null, validation: null, compiledAt: null });
    expect(failed.errorMessage).toMatch(/compile/i);
    expect(failed.errorMessage).not.toMatch(/INPUTSECRET|TypeError|answers|is not a function|at /);
    const job = await jobOf(specId);
    expect(job).toMatchObject({ attempts: 3, max_attempts: 3 });
    // The reason is in the log for the operator, once as an error (the last attempt); the input is not.
    await until('the last attempt is logged', async () => app.logLines.some((line) => line.level === 50 && String(line.jobId) === job!.id), 10_000);
    expect(app.rawLog.filter((line) => line.includes('INPUTSECRET'))).toEqual([]);
  }, 90_000);

  it('does nothing, and fails nothing, when its project was deleted before it ran', async () => {
    const projectId = await startedProject('Deleted before the compile ran');
    const specId = await storedSpecification(projectId, { project: { id: projectId, name: 'x', description: null }, phase: 'DISCOVERY', answers: [], unanswered: [] }, 'infinity');
    const job = await jobOf(specId);
    const deleted = await call(app.url, `/api/projects/${projectId}`, { apiKey, method: 'DELETE' });
    expect(deleted.status, deleted.text).toBe(200);
    expect(await specificationRows(projectId)).toBe(0);
    await sqlAsOwner(`update graphile_worker._private_jobs set run_at = now() where key = $1`, [`specification:${specId}`]);
    await until('the compile job has run', async () => (await jobOf(specId)) === undefined, 30_000);
    expect((await get(`/specification/${specId}`)).status).toBe(404);
    expect(app.logLines.filter((line) => Number(line.level) >= 40 && String(line.jobId) === job!.id)).toEqual([]);
    expect(app.logLines.filter((line) => String(line.jobId) === job!.id && String(line.msg).includes('nothing to do'))).toHaveLength(1);
  }, 60_000);

  it('run again, leaves the compiled specification as it was', async () => {
    const projectId = await startedProject('Compiled twice');
    const queued = await post('/specification/compile', { projectId }, (await userWithRole('Compiler', 'member')).apiKey);
    const first = await settled(queued.body.data.specId);
    expect(first.status).toBe('completed');
    await enqueueCompile(first.id);
    await until('the second run is done', async () => (await jobOf(first.id)) === undefined, 30_000);
    expect((await get(`/specification/${first.id}`)).body.data).toEqual(first);
  }, 60_000);

  it('two compiles of one project at once are versions 1 and 2, each answered 202', async () => {
    const projectId = await startedProject('Racing compiles');
    const [racer, member] = [await userWithRole('Racer', 'member'), await userWithRole('Racer', 'member')];
    // Both requests wait on the project, held here, then go at once.
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    let responses;
    try {
      await holder.query('begin');
      await holder.query('select 1 from projects where id = $1 for update', [projectId]);
      const racing = Promise.all([post('/specification/compile', { projectId }, racer.apiKey), post('/specification/compile', { projectId }, member.apiKey)]);
      await until('both compiles wait on the project', async () => (await countRows(app.database.ownerUrl, "pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")) >= 2, 15_000);
      await holder.query('commit');
      responses = await racing;
    } finally {
      await holder.end();
    }
    expect(responses.map((response) => response.status)).toEqual([202, 202]);
    const versions = await Promise.all(responses.map(async (response) => (await settled(response.body.data.specId)).version));
    expect(versions.sort()).toEqual(['1', '2']);
  }, 60_000);
});
