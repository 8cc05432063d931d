import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Agents drafting a project's specification under a budget (seed §4.5, DESIGN §7), with the
 * offline provider: deterministic drafts, real token counts, and prices set here so every call
 * costs something ($1 per million tokens read, $4 per million written).
 */
let app: TestApp;
let apiKey: string;
let orgId: string;
let walk: ReturnType<typeof flowWalker>;

const IN_PRICE = 1;
const OUT_PRICE = 4;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const post = (path: string, body: unknown, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key, body });
const get = (path: string, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key });

type Call = { step: number; agent: string; task: string; provider: string; model: string; promptHash: string; inputTokens: number; outputTokens: number; costUSD: number; finishReason: string };

async function settled(executionId: string, key = apiKey) {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const response = await get(`/agents/execution/${executionId}/status`, key);
    expect(response.status, response.text).toBe(200);
    if (response.body.data.status !== 'running') return response.body.data;
  }
  throw new Error('the agent execution did not settle within 30 s');
}

async function generate(projectId: string, options?: Record<string, unknown>) {
  const started = await post('/agents/generate-spec', { projectId, ...(options ? { options } : {}) });
  expect(started.status, started.text).toBe(202);
  return settled(started.body.data.executionId);
}

const spent = (calls: Call[]) => calls.reduce((sum, c) => sum + c.inputTokens + c.outputTokens, 0);

beforeAll(async () => {
  app = await startTestApp({
    mode: 'all',
    env: {
      WORKER_HEARTBEAT_MS: '500',
      RATE_LIMIT_AGENT_PER_MINUTE: '5000',
      AI_PRICE_INPUT_PER_MILLION_USD: String(IN_PRICE),
      AI_PRICE_OUTPUT_PER_MILLION_USD: String(OUT_PRICE),
    },
  });
  apiKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  walk = flowWalker(app, apiKey, orgId);
}, 120_000);
afterAll(() => app?.stop());

describe('agents drafting a specification', () => {
  it('draft each section in turn, record every call, and store the specification they assembled', async () => {
    const projectId = await walk.finishedProject('Clinic by agents');
    const started = await post('/agents/generate-spec', { projectId, options: { includeTaskGraph: true } });
    expect(started.status, started.text).toBe(202);
    const { executionId } = started.body.data;
    expect(started.body.data).toEqual({
      executionId: expect.any(String),
      status: 'running',
      strategy: 'sequential',
      agents: ['analyst', 'architect', 'api-designer', 'qa-engineer', 'designer'],
      startedAt: expect.any(String),
      statusUrl: `/api/agents/execution/${executionId}/status`,
    });

    const execution = await settled(executionId);
    expect(execution).toMatchObject({ status: 'completed', error: null, progress: { completedSteps: 5, totalSteps: 5, currentStep: null } });
    const calls: Call[] = execution.calls;
    expect(calls.map((c) => [c.step, c.agent, c.task, c.provider, c.model, c.finishReason])).toEqual(
      ['analyst', 'architect', 'api-designer', 'qa-engineer', 'designer'].map((agent, index) => [index + 1, agent, 'draft', 'offline', 'specwright-offline-1', 'stop']),
    );
    for (const c of calls) {
      expect(c.promptHash).toMatch(/^[0-9a-f]{64}$/);
      expect(c.inputTokens).toBeGreaterThan(50);
      expect(c.outputTokens).toBeGreaterThan(5);
      expect(c.costUSD).toBeCloseTo((c.inputTokens * IN_PRICE + c.outputTokens * OUT_PRICE) / 1e6, 9);
    }
    // Sequential: each agent reads the drafts before its own, so each prompt is longer than the last.
    for (let index = 1; index < calls.length; index++) expect(calls[index]!.inputTokens).toBeGreaterThan(calls[index - 1]!.inputTokens);
    expect(execution.budget).toEqual({ tokensUsed: spent(calls), tokensLimit: 200_000, costIncurred: expect.any(Number), costLimit: 5 });
    expect(execution.budget.costIncurred).toBeCloseTo(calls.reduce((sum, c) => sum + c.costUSD, 0), 9);

    // The result is the project's next specification, with who drafted what.
    const { result } = execution;
    expect(result.validationPassed).toBe(true);
    const stored = await get(`/specification/${result.specId}`);
    expect(stored.body.data).toMatchObject({ projectId, version: '1', status: 'completed', validation: { passed: true, errors: [] } });
    expect(stored.body.data.spec).toEqual(result.spec);
    expect(result.spec.metadata).toMatchObject({
      generator: 'specwright-agents/1 (offline/specwright-offline-1, sequential)',
      draftedBy: { overview: 'analyst', requirements: 'analyst', entities: 'architect', architecture: 'architect', endpoints: 'api-designer', workflows: 'api-designer', testCases: 'qa-engineer', designSystem: 'designer' },
    });
    expect(result.spec.entities.map((entity: { path: string }) => entity.path)).toEqual(['/clinics', '/patients', '/appointments', '/categories']);
    expect(result.spec.taskGraph.tasks.at(-1).title).toBe('Release');

    // The offline provider is deterministic: the same project drafts with the same calls.
    const again = await generate(projectId, { includeTaskGraph: true });
    expect(again.calls.map((c: Call) => [c.promptHash, c.inputTokens, c.outputTokens])).toEqual(calls.map((c) => [c.promptHash, c.inputTokens, c.outputTokens]));
    expect((await get(`/specification/${again.result.specId}`)).body.data.version).toBe('2');
  }, 90_000);

  it('plan each strategy as its calls: parallel alone, hierarchical under a supervisor, debate in two rounds', async () => {
    const projectId = await walk.finishedProject('Strategies');
    const agents = ['architect', 'designer'];
    const shape = (execution: { calls: Call[] }) => execution.calls.map((c) => `${c.step}:${c.agent}:${c.task}`);

    const parallel = await generate(projectId, { strategy: 'parallel', agents });
    expect(shape(parallel)).toEqual(expect.arrayContaining(['1:architect:draft', '2:designer:draft']));
    expect(parallel.progress.totalSteps).toBe(2);

    const hierarchical = await generate(projectId, { strategy: 'hierarchical', agents });
    expect(shape(hierarchical).sort()).toEqual(['1:supervisor:plan', '2:architect:draft', '3:designer:draft', '4:supervisor:review']);
    expect(hierarchical.result.validationPassed).toBe(true);

    const debate = await generate(projectId, { strategy: 'debate', agents });
    expect(shape(debate).sort()).toEqual(['1:architect:draft', '2:designer:draft', '3:architect:revise', '4:designer:revise']);
    // A revision reads both drafts: its prompt is longer than any draft's.
    const draftInputs = debate.calls.filter((c: Call) => c.task === 'draft').map((c: Call) => c.inputTokens);
    for (const revision of debate.calls.filter((c: Call) => c.task === 'revise')) expect(revision.inputTokens).toBeGreaterThan(Math.max(...draftInputs));

    // Sections no named agent drafts are compiled: the architect and designer only drafted theirs.
    expect(debate.result.spec.metadata.draftedBy).toEqual({ entities: 'architect', architecture: 'architect', designSystem: 'designer' });
    expect(debate.result.spec.overview.problem).toContain('Small clinics');
  }, 90_000);

  it("a supervisor's review that finds the drafts wanting says so among the warnings", async () => {
    const projectId = await walk.newProject('Thin project');
    expect((await post('/flow/start', { projectId })).status).toBe(200);
    const execution = await generate(projectId, { strategy: 'hierarchical', agents: ['analyst'] });
    expect(execution.status).toBe('completed');
    expect(execution.result.validationPassed).toBe(false);
    const specification = (await get(`/specification/${execution.result.specId}`)).body.data;
    expect(specification.validation.errors.map((finding: { code: string }) => finding.code)).toEqual(['no_problem', 'no_entities', 'no_features']);
    expect(specification.validation.warnings).toContainEqual({ code: 'review_not_approved', message: expect.stringContaining('The problem is not stated') });
  }, 60_000);
});

describe('budgets', () => {
  it('fail an execution with budget_exceeded before a call it cannot afford, keep what was done, and resume from the checkpoint', async () => {
    const projectId = await walk.finishedProject('On a budget');
    const full = await generate(projectId);
    const fullCalls: Call[] = full.calls;
    // Enough for the first two calls and part of the third's prompt: the third is never made.
    const maxTokens = spent(fullCalls.slice(0, 2)) + Math.floor(fullCalls[2]!.inputTokens / 2);

    const failed = await generate(projectId, { budget: { maxTokens } });
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ code: 'budget_exceeded', message: expect.stringContaining('Step 3 (api-designer'), checkpoint: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(failed.result).toBeNull();
    expect(failed.calls.map((c: Call) => c.agent)).toEqual(['analyst', 'architect']);
    expect(failed.budget.tokensUsed).toBe(spent(fullCalls.slice(0, 2)));
    expect(failed.budget.tokensUsed).toBeLessThanOrEqual(maxTokens);
    expect(failed.progress).toMatchObject({ completedSteps: 2, totalSteps: 5 });
    expect(await countRows(app.database.ownerUrl, 'specifications where project_id = $1', [projectId])).toBe(1);

    // Resuming with a budget still too small for what was spent is refused; a larger one continues.
    const tooSmall = await post(`/agents/execution/${failed.executionId}/resume`, { checkpoint: failed.error.checkpoint, budget: { maxTokens: failed.budget.tokensUsed } });
    expect([tooSmall.status, tooSmall.body.error.code]).toEqual([402, 'BUDGET_EXCEEDED']);
    const wrongCheckpoint = await post(`/agents/execution/${failed.executionId}/resume`, { checkpoint: '00000000-0000-4000-8000-000000000000' });
    expect([wrongCheckpoint.status, wrongCheckpoint.body.error.code]).toEqual([409, 'CONFLICT']);
    const resumed = await post(`/agents/execution/${failed.executionId}/resume`, { checkpoint: failed.error.checkpoint, budget: { maxTokens: 200_000 } });
    expect(resumed.status, resumed.text).toBe(202);
    expect(resumed.body.data).toMatchObject({ executionId: failed.executionId, status: 'running' });
    const again = await post(`/agents/execution/${failed.executionId}/resume`, { checkpoint: failed.error.checkpoint });
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);

    const completed = await settled(failed.executionId);
    expect(completed.status).toBe('completed');
    // The two steps done were not made again: five calls in all, the same five a full run makes.
    expect(completed.calls.map((c: Call) => [c.step, c.promptHash])).toEqual(fullCalls.map((c) => [c.step, c.promptHash]));
    expect(completed.budget).toMatchObject({ tokensUsed: spent(fullCalls), tokensLimit: 200_000 });
    expect(completed.result.spec.entities).toEqual(full.result.spec.entities);
  }, 90_000);

  it('count the tokens of a call cut off by the budget, and the cost budget binds as the token budget does', async () => {
    const projectId = await walk.finishedProject('Cut off');
    const full = await generate(projectId, { agents: ['architect'] });
    const [only] = full.calls as Call[];
    // Room for the prompt and half the answer: the call is made, cut at the budget, and its tokens counted.
    const cut = await generate(projectId, { agents: ['architect'], budget: { maxTokens: only!.inputTokens + Math.floor(only!.outputTokens / 2) } });
    expect(cut.error.code).toBe('budget_exceeded');
    expect(cut.error.message).toContain('cut off');
    expect(cut.calls).toEqual([expect.objectContaining({ finishReason: 'length', inputTokens: only!.inputTokens, outputTokens: Math.floor(only!.outputTokens / 2) })]);
    expect(cut.budget.tokensUsed).toBe(cut.budget.tokensLimit);
    expect(cut.progress.completedSteps).toBe(0);

    // In dollars: enough for the prompt and a third of the answer.
    const maxCostUSD = (only!.inputTokens * IN_PRICE + (only!.outputTokens / 3) * OUT_PRICE) / 1e6;
    const poor = await generate(projectId, { agents: ['architect'], budget: { maxCostUSD } });
    expect(poor.error.code).toBe('budget_exceeded');
    expect(poor.budget.costIncurred).toBeLessThanOrEqual(maxCostUSD);
    expect(poor.calls[0].outputTokens).toBe(Math.floor(only!.outputTokens / 3));

    // Resumed with room: the cut step is made again, whole.
    const resumed = await post(`/agents/execution/${poor.executionId}/resume`, { checkpoint: poor.error.checkpoint, budget: { maxCostUSD: 1 } });
    expect(resumed.status, resumed.text).toBe(202);
    const completed = await settled(poor.executionId);
    expect(completed.calls.map((c: Call) => c.finishReason)).toEqual(['length', 'stop']);
    expect(completed.calls[1].promptHash).toBe(only!.promptHash);
  }, 90_000);

  it('refuse a budget that cannot pay for the first call, storing nothing', async () => {
    const projectId = await walk.finishedProject('Penniless');
    const rows = async () => [
      await countRows(app.database.ownerUrl, 'agent_executions where project_id = $1', [projectId]),
      await countRows(app.database.ownerUrl, "graphile_worker.jobs where task_identifier = 'agents.generate_spec'"),
    ];
    const before = await rows();
    const tokens = await post('/agents/generate-spec', { projectId, options: { budget: { maxTokens: 10 } } });
    expect([tokens.status, tokens.body.error.code]).toEqual([402, 'BUDGET_EXCEEDED']);
    expect(tokens.body.error.message).toContain('token budget has 10 of 10 left');
    const dollars = await post('/agents/generate-spec', { projectId, options: { budget: { maxCostUSD: 0 } } });
    expect([dollars.status, dollars.body.error.code]).toEqual([402, 'BUDGET_EXCEEDED']);
    expect(await rows()).toEqual(before);
  });
});

describe('what generate-spec refuses', () => {
  it('bad options, a flow not started, an unknown project: a clear error and nothing stored', async () => {
    const projectId = await walk.newProject('Refusals');
    const rows = () => countRows(app.database.ownerUrl, 'agent_executions');
    const before = await rows();
    const refuse = async (body: unknown, status: number, code: string, field?: string) => {
      const response = await post('/agents/generate-spec', body);
      expect([response.status, response.body.error.code], response.text).toEqual([status, code]);
      if (field) expect(response.body.error.details.issues[0].field).toBe(field);
    };
    await refuse({ projectId }, 409, 'CONFLICT');
    await refuse({ projectId: '00000000-0000-4000-8000-000000000000' }, 404, 'NOT_FOUND');
    await refuse({ projectId, options: { strategy: 'committee' } }, 400, 'VALIDATION_ERROR', 'options.strategy');
    await refuse({ projectId, options: { agents: ['poet'] } }, 400, 'VALIDATION_ERROR', 'options.agents.0');
    await refuse({ projectId, options: { agents: ['analyst', 'analyst'] } }, 400, 'VALIDATION_ERROR', 'options.agents');
    await refuse({ projectId, options: { agents: [] } }, 400, 'VALIDATION_ERROR', 'options.agents');
    await refuse({ projectId, options: { budget: { maxTokens: 0 } } }, 400, 'VALIDATION_ERROR', 'options.budget.maxTokens');
    await refuse({ projectId, options: { budget: { maxCostUSD: -1 } } }, 400, 'VALIDATION_ERROR', 'options.budget.maxCostUSD');
    await refuse({ projectId, options: { budget: { maxTokens: 1.5 } } }, 400, 'VALIDATION_ERROR', 'options.budget.maxTokens');
    await refuse({ projectId, options: { temperature: 2 } }, 400, 'VALIDATION_ERROR');
    expect(await rows()).toBe(before);
    const missing = await get('/agents/execution/00000000-0000-4000-8000-000000000000/status');
    expect([missing.status, missing.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const notAnId = await get('/agents/execution/nope/status');
    expect([notAnId.status, notAnId.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it("is for members and above: a customer reads the project's executions but starts or resumes none; another tenant sees nothing", async () => {
    const projectId = await walk.finishedProject('Who drafts');
    const execution = await generate(projectId, { agents: ['designer'], budget: { maxTokens: 380 } });
    expect(execution.status).toBe('failed');
    const customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Cara');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, orgId, customer.userId]);
    expect((await post('/agency-projects', { organizationId: orgId, projectId, customerUserId: customer.userId })).status).toBe(201);

    const refused = await post('/agents/generate-spec', { projectId }, customer.apiKey);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const resumeRefused = await post(`/agents/execution/${execution.executionId}/resume`, { checkpoint: execution.error.checkpoint }, customer.apiKey);
    expect([resumeRefused.status, resumeRefused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await get(`/agents/execution/${execution.executionId}/status`, customer.apiKey)).body.data.status).toBe('failed');

    const foreign = await createTenant(app, 'Elsewhere');
    expect((await get(`/agents/execution/${execution.executionId}/status`, foreign.apiKey)).status).toBe(404);
    expect((await post('/agents/generate-spec', { projectId }, foreign.apiKey)).status).toBe(404);
    const foreignResume = await post(`/agents/execution/${execution.executionId}/resume`, { checkpoint: execution.error.checkpoint }, foreign.apiKey);
    expect([foreignResume.status, foreignResume.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect((await get(`/agents/memory?sessionId=${execution.executionId}`, foreign.apiKey)).body.data.sessions).toEqual([]);
    const [row] = await sqlAsOwner('select status, checkpoint from agent_executions where id = $1', [execution.executionId]);
    expect(row).toEqual({ status: 'failed', checkpoint: execution.error.checkpoint });
  }, 60_000);
});

describe('memory', () => {
  it("reports each agent's session in an execution, filtered by session and agent, with totals", async () => {
    const projectId = await walk.finishedProject('Memories');
    const execution = await generate(projectId, { strategy: 'hierarchical', agents: ['architect', 'designer'] });
    const memory = await get(`/agents/memory?sessionId=${execution.executionId}`);
    expect(memory.status, memory.text).toBe(200);
    const tokensOf = (agent: string) => execution.calls.filter((c: Call) => c.agent === agent).reduce((sum: number, c: Call) => sum + c.inputTokens + c.outputTokens, 0);
    expect(memory.body.data.sessions.map((s: { agentName: string; messageCount: number; tokensUsed: number }) => [s.agentName, s.messageCount, s.tokensUsed]).sort()).toEqual(
      [['architect', 2, tokensOf('architect')], ['designer', 2, tokensOf('designer')], ['supervisor', 4, tokensOf('supervisor')]].sort(),
    );
    expect(memory.body.data.totals).toEqual({ totalSessions: 3, totalMessages: 8, totalTokens: execution.budget.tokensUsed });
    const supervisor = await get(`/agents/memory?sessionId=${execution.executionId}&agentName=supervisor`);
    expect(supervisor.body.data.sessions).toEqual([{ sessionId: execution.executionId, agentName: 'supervisor', messageCount: 4, tokensUsed: tokensOf('supervisor'), lastActivity: expect.any(String) }]);
    const page = await get(`/agents/memory?sessionId=${execution.executionId}&limit=1&offset=1`);
    expect([page.body.data.sessions.length, page.body.data.totals.totalSessions, page.body.data.limit, page.body.data.offset]).toEqual([1, 3, 1, 1]);
    const badAgent = await get('/agents/memory?agentName=poet');
    expect([badAgent.status, badAgent.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  }, 60_000);

  it("goes with its project: deleting the project removes its executions and calls, and says so", async () => {
    const projectId = await walk.finishedProject('Deleted with its agents');
    const execution = await generate(projectId, { agents: ['designer'] });
    const deleted = await call(app.url, `/api/projects/${projectId}`, { apiKey, method: 'DELETE' });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body.data.deletedTables).toEqual(expect.arrayContaining(['agent_calls', 'agent_executions', 'specifications']));
    expect(await countRows(app.database.ownerUrl, 'agent_executions where id = $1', [execution.executionId])).toBe(0);
    expect(await countRows(app.database.ownerUrl, 'agent_calls where execution_id = $1', [execution.executionId])).toBe(0);
  }, 60_000);
});
