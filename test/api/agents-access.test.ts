import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ApiResponse } from '../helpers/http.ts';
import pg from 'pg';
import { untilLockWaiters, whileTransactionHolds } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant, ownerOfAnotherOrganization, type Actor } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Who reaches an agent execution, and what races with a generate or a resume leave behind. The API
 * runs alone (no worker): an execution stays running until the test fails it, as the worker would.
 */
let app: TestApp;
let owner: { apiKey: string; tenantId: string; organizationId: string };

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const outcome = (response: ApiResponse) => `${response.status} ${response.body?.error?.code ?? ''}`.trim();
const generate = (projectId: string, key: string, headers: Record<string, string> = {}) => call(app.url, '/api/agents/generate-spec', { apiKey: key, headers, body: { projectId, options: { agents: ['designer'] } } });
const resume = (executionId: string, checkpoint: string, key: string) => call(app.url, `/api/agents/execution/${executionId}/resume`, { apiKey: key, body: { checkpoint } });
const jobsOf = (executionId: string) => countRows(app.database.ownerUrl, 'graphile_worker._private_jobs where key = $1', [`agent-execution:${executionId}`]);

async function startedProject(name: string): Promise<string> {
  const created = await call(app.url, '/api/projects', { apiKey: owner.apiKey, body: { name, organizationId: owner.organizationId } });
  expect(created.status, created.text).toBe(201);
  const started = await call(app.url, '/api/flow/start', { apiKey: owner.apiKey, body: { projectId: created.body.data.id } });
  expect(started.status, started.text).toBe(200);
  return created.body.data.id;
}

/** An execution of the project, failed as the worker fails one: its job gone, a checkpoint to resume from. */
async function failedExecution(projectId: string): Promise<{ executionId: string; checkpoint: string }> {
  const started = await generate(projectId, owner.apiKey);
  expect(started.status, started.text).toBe(202);
  const { executionId } = started.body.data;
  const [row] = await sqlAsOwner(
    `update agent_executions set status = 'failed', error_code = 'budget_exceeded', error_message = 'Step 1 was not started', checkpoint = gen_random_uuid() where id = $1 returning checkpoint`,
    [executionId],
  );
  await sqlAsOwner('delete from graphile_worker._private_jobs where key = $1', [`agent-execution:${executionId}`]);
  return { executionId, checkpoint: row.checkpoint };
}

async function newMember(name: string): Promise<Actor> {
  const user = await createUserInTenant(app, sqlAsOwner, owner.tenantId, name);
  const added = await call(app.url, `/api/organizations/${owner.organizationId}/members`, { apiKey: owner.apiKey, body: { userId: user.userId, role: 'member' } });
  expect(added.status, added.text).toBe(201);
  return user;
}

const removeMember = (user: Actor) => call(app.url, `/api/organizations/${owner.organizationId}/members/${user.userId}`, { apiKey: owner.apiKey, method: 'DELETE' });

/**
 * `write` of `user` waits on the project (locked by the test) while the user is removed from its
 * organization, which touches no project row and answers at once; then the project is let go.
 */
async function removedWhileWaiting(projectId: string, user: Actor, write: () => Promise<ApiResponse>): Promise<[ApiResponse, ApiResponse]> {
  const holder = new pg.Client({ connectionString: app.database.ownerUrl });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('select 1 from projects where id = $1 for update', [projectId]);
    const writing = write();
    await untilLockWaiters(app.database.ownerUrl);
    const removed = await removeMember(user);
    await holder.query('commit');
    return [removed, await writing];
  } finally {
    await holder.end();
  }
}

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_AGENT_PER_MINUTE: '5000' } });
  owner = { apiKey: app.bootstrap.apiKey, tenantId: app.bootstrap.tenantId, organizationId: app.bootstrap.organizationId };
}, 120_000);
afterAll(() => app?.stop());

describe('an execution the caller cannot see', () => {
  it('answers a resume exactly as an unknown id does, whether or not it exists (no existence oracle)', async () => {
    const projectId = await startedProject('Unseen');
    const { executionId, checkpoint } = await failedExecution(projectId);
    const outsider = await ownerOfAnotherOrganization(app, owner.apiKey, 'Outsider');
    const foreign = await createTenant(app, 'Foreign');
    const unknown = await resume('00000000-0000-4000-8000-000000000000', checkpoint, outsider.apiKey);
    expect(outcome(unknown)).toBe('404 NOT_FOUND');
    for (const caller of [outsider, foreign]) {
      const refused = await resume(executionId, checkpoint, caller.apiKey);
      expect(outcome(refused)).toBe('404 NOT_FOUND');
      expect(refused.body.error.message).toBe(unknown.body.error.message);
      const status = await call(app.url, `/api/agents/execution/${executionId}/status`, { apiKey: caller.apiKey });
      expect(outcome(status)).toBe('404 NOT_FOUND');
      expect(status.body.error.message).toBe(unknown.body.error.message);
    }
    expect((await sqlAsOwner('select status from agent_executions where id = $1', [executionId]))[0].status).toBe('failed');
  });

  it("lists none of its sessions in another tenant's or an outsider's memory", async () => {
    const projectId = await startedProject('Remembered');
    const { executionId } = await failedExecution(projectId);
    await sqlAsOwner(
      `insert into agent_calls (tenant_id, execution_id, step, agent, task, provider, model, prompt_hash, input_tokens, output_tokens, cost_usd, finish_reason, output)
       values ($1, $2, 1, 'designer', 'draft', 'offline', 'm', repeat('a', 64), 10, 5, 0.000000001, 'stop', '{}')`,
      [owner.tenantId, executionId],
    );
    const outsider = await ownerOfAnotherOrganization(app, owner.apiKey, 'Forgetful');
    const foreign = await createTenant(app, 'Amnesia');
    for (const caller of [outsider, foreign]) {
      const memory = await call(app.url, '/api/agents/memory', { apiKey: caller.apiKey });
      expect(memory.status, memory.text).toBe(200);
      expect(memory.body.data).toMatchObject({ sessions: [], totals: { totalSessions: 0, totalMessages: 0, totalTokens: 0 }, total: 0 });
    }
    const own = await call(app.url, `/api/agents/memory?sessionId=${executionId}`, { apiKey: owner.apiKey });
    expect(own.body.data.sessions).toEqual([{ sessionId: executionId, agentName: 'designer', messageCount: 2, tokensUsed: 15, lastActivity: expect.any(String) }]);
  });
});

describe('a member removed while their request waits on the project', () => {
  it('generate: NOT_FOUND once the removal answered first, and no execution or job', async () => {
    const projectId = await startedProject('Removed generating');
    const leaving = await newMember('Leaving');
    const agentJobs = () => countRows(app.database.ownerUrl, "graphile_worker.jobs where task_identifier = 'agents.generate_spec'");
    const jobsBefore = await agentJobs();
    const [removed, generated] = await removedWhileWaiting(projectId, leaving, () => generate(projectId, leaving.apiKey));
    expect(removed.status, removed.text).toBe(200);
    expect(outcome(generated)).toBe('404 NOT_FOUND');
    expect(await countRows(app.database.ownerUrl, 'agent_executions where project_id = $1', [projectId])).toBe(0);
    expect(await agentJobs()).toBe(jobsBefore);
  });

  it('resume: NOT_FOUND once the removal answered first, and the execution stays failed with no job', async () => {
    const projectId = await startedProject('Removed resuming');
    const { executionId, checkpoint } = await failedExecution(projectId);
    const leaving = await newMember('Leaving too');
    const [removed, resumed] = await removedWhileWaiting(projectId, leaving, () => resume(executionId, checkpoint, leaving.apiKey));
    expect(removed.status, removed.text).toBe(200);
    expect(outcome(resumed)).toBe('404 NOT_FOUND');
    expect((await sqlAsOwner('select status, checkpoint from agent_executions where id = $1', [executionId]))[0]).toEqual({ status: 'failed', checkpoint });
    expect(await jobsOf(executionId)).toBe(0);
  });
});

describe('resumes racing', () => {
  it('two resumes of one failure: one runs it, the other is CONFLICT, and one job is queued', async () => {
    const projectId = await startedProject('Twice resumed');
    const { executionId, checkpoint } = await failedExecution(projectId);
    const member = await newMember('Second');
    const [first, second] = await whileTransactionHolds(
      app.database.ownerUrl,
      (holder) => holder.query('select 1 from projects where id = $1 for update', [projectId]),
      () => Promise.all([resume(executionId, checkpoint, owner.apiKey), resume(executionId, checkpoint, member.apiKey)]),
    );
    expect([outcome(first), outcome(second)].sort()).toEqual(['202', '409 CONFLICT']);
    expect((await sqlAsOwner('select status from agent_executions where id = $1', [executionId]))[0].status).toBe('running');
    expect(await jobsOf(executionId)).toBe(1);
  });

  it("a resume racing the project's delete: NOT_FOUND after it, or resumed and then deleted with it", async () => {
    const projectId = await startedProject('Resumed and deleted');
    const { executionId, checkpoint } = await failedExecution(projectId);
    const [deleted, resumed] = await whileTransactionHolds(
      app.database.ownerUrl,
      (holder) => holder.query('select 1 from projects where id = $1 for update', [projectId]),
      () => Promise.all([call(app.url, `/api/projects/${projectId}`, { apiKey: owner.apiKey, method: 'DELETE' }), resume(executionId, checkpoint, owner.apiKey)]),
    );
    expect(deleted.status, deleted.text).toBe(200);
    expect(['202', '404 NOT_FOUND']).toContain(outcome(resumed));
    expect(await countRows(app.database.ownerUrl, 'agent_executions where id = $1', [executionId])).toBe(0);
  });
});

describe('a platform admin acting in another tenant (X-Tenant-ID)', () => {
  it("generates and reads there without being a member, recorded as no user of that tenant", async () => {
    const foreign = await createTenant(app, 'Visited');
    const created = await call(app.url, '/api/projects', { apiKey: foreign.apiKey, body: { name: 'Visited project', organizationId: foreign.organizationId } });
    expect(created.status, created.text).toBe(201);
    const projectId = created.body.data.id;
    expect((await call(app.url, '/api/flow/start', { apiKey: foreign.apiKey, body: { projectId } })).status).toBe(200);
    const headers = { 'X-Tenant-ID': foreign.tenantId };
    const started = await generate(projectId, owner.apiKey, headers);
    expect(started.status, started.text).toBe(202);
    const { executionId } = started.body.data;
    expect((await sqlAsOwner('select tenant_id, created_by from agent_executions where id = $1', [executionId]))[0]).toEqual({ tenant_id: foreign.tenantId, created_by: null });
    const status = await call(app.url, `/api/agents/execution/${executionId}/status`, { apiKey: owner.apiKey, headers });
    expect(status.status, status.text).toBe(200);
    // Without the header, it is another tenant's execution: not found.
    expect(outcome(await call(app.url, `/api/agents/execution/${executionId}/status`, { apiKey: owner.apiKey }))).toBe('404 NOT_FOUND');
  });
});
