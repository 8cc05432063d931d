import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ApiResponse } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * What the agents' routes refuse, and how: VALIDATION_ERROR naming the field, never a 500, and
 * nothing stored or queued; budgets kept to what the numeric(15, 9) columns hold, exactly. The API
 * runs alone (no worker), with prices, so every call costs something.
 */
let app: TestApp;
let apiKey: string;
let projectId: string;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const post = (path: string, body: unknown) => call(app.url, `/api${path}`, { apiKey, body });
const get = (path: string) => call(app.url, `/api${path}`, { apiKey });
const stored = async () => [await countRows(app.database.ownerUrl, 'agent_executions'), await countRows(app.database.ownerUrl, "graphile_worker.jobs where task_identifier = 'agents.generate_spec'")];

function expectInvalid(response: ApiResponse, field: string) {
  expect([response.status, response.body?.error?.code], response.text).toEqual([400, 'VALIDATION_ERROR']);
  expect(response.body.error.details.issues).toContainEqual({ field, issue: expect.any(String) });
}

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_AGENT_PER_MINUTE: '5000', AI_PRICE_INPUT_PER_MILLION_USD: '1', AI_PRICE_OUTPUT_PER_MILLION_USD: '4' } });
  apiKey = app.bootstrap.apiKey;
  const created = await post('/projects', { name: 'Inputs', organizationId: app.bootstrap.organizationId });
  projectId = created.body.data.id;
  expect((await post('/flow/start', { projectId })).status).toBe(200);
}, 120_000);
afterAll(() => app?.stop());

describe('a budget in dollars', () => {
  it('is refused out of range or not a number, field by field, storing and queuing nothing', async () => {
    const before = await stored();
    for (const maxCostUSD of [1e300, 100_000.5, -1e-9, '5', null]) {
      expectInvalid(await post('/agents/generate-spec', { projectId, options: { budget: { maxCostUSD } } }), 'options.budget.maxCostUSD');
    }
    expect(await stored()).toEqual(before);
  });

  it('is kept to the nanodollar: the status reads back what was sent', async () => {
    for (const maxCostUSD of [0.123456789, 99_999.999999999, 3]) {
      const started = await post('/agents/generate-spec', { projectId, options: { budget: { maxCostUSD } } });
      expect(started.status, started.text).toBe(202);
      const status = await get(`/agents/execution/${started.body.data.executionId}/status`);
      expect(status.body.data.budget).toMatchObject({ costLimit: maxCostUSD, costIncurred: 0 });
    }
  });
});

describe('a resume', () => {
  async function failed(spent: { tokens: number; cost: string }) {
    const started = await post('/agents/generate-spec', { projectId, options: { agents: ['designer'] } });
    expect(started.status, started.text).toBe(202);
    const { executionId } = started.body.data;
    const [row] = await sqlAsOwner(
      `update agent_executions set status = 'failed', error_code = 'budget_exceeded', error_message = 'x', checkpoint = gen_random_uuid(), tokens_used = $2, cost_usd = $3 where id = $1 returning checkpoint`,
      [executionId, spent.tokens, spent.cost],
    );
    await sqlAsOwner('delete from graphile_worker._private_jobs where key = $1', [`agent-execution:${executionId}`]);
    return { executionId, checkpoint: row.checkpoint as string };
  }

  it('refuses bad input field by field, leaving the execution failed', async () => {
    const { executionId, checkpoint } = await failed({ tokens: 100, cost: '0.0001' });
    expectInvalid(await post(`/agents/execution/${executionId}/resume`, { checkpoint: 'nope' }), 'checkpoint');
    expectInvalid(await post(`/agents/execution/${executionId}/resume`, {}), 'checkpoint');
    expectInvalid(await post(`/agents/execution/${executionId}/resume`, { checkpoint, budget: { maxCostUSD: -1 } }), 'budget.maxCostUSD');
    expectInvalid(await post(`/agents/execution/${executionId}/resume`, { checkpoint, budget: { maxTokens: 1e20 } }), 'budget.maxTokens');
    expectInvalid(await post(`/agents/execution/${executionId}/resume`, { checkpoint, budget: { maxTokens: 10, tokens: 5 } }), 'budget.tokens');
    expect((await sqlAsOwner('select status from agent_executions where id = $1', [executionId]))[0].status).toBe('failed');
  });

  it('with a cost budget not above what was spent is BUDGET_EXCEEDED, as the README says, not a run that fails at once', async () => {
    const { executionId, checkpoint } = await failed({ tokens: 100, cost: '0.000123' });
    const equal = await post(`/agents/execution/${executionId}/resume`, { checkpoint, budget: { maxCostUSD: 0.000123 } });
    expect([equal.status, equal.body.error?.code], equal.text).toEqual([402, 'BUDGET_EXCEEDED']);
    const below = await post(`/agents/execution/${executionId}/resume`, { checkpoint, budget: { maxCostUSD: 0.0001 } });
    expect([below.status, below.body.error?.code], below.text).toEqual([402, 'BUDGET_EXCEEDED']);
    expect((await sqlAsOwner('select status, checkpoint from agent_executions where id = $1', [executionId]))[0]).toEqual({ status: 'failed', checkpoint });
    const above = await post(`/agents/execution/${executionId}/resume`, { checkpoint, budget: { maxCostUSD: 0.000124 } });
    expect(above.status, above.text).toBe(202);
  });
});

describe('the memory query', () => {
  it('refuses bad parameters field by field, never a 500', async () => {
    expectInvalid(await get('/agents/memory?sessionId=nope'), 'sessionId');
    expectInvalid(await get('/agents/memory?agentName=poet'), 'agentName');
    expectInvalid(await get('/agents/memory?limit=0'), 'limit');
    expectInvalid(await get('/agents/memory?limit=201'), 'limit');
    expectInvalid(await get('/agents/memory?limit=abc'), 'limit');
    expectInvalid(await get('/agents/memory?offset=-1'), 'offset');
    expectInvalid(await get('/agents/memory?offset=1.5'), 'offset');
    const huge = await get(`/agents/memory?offset=${'9'.repeat(30)}`);
    expect(huge.status, huge.text).toBe(400);
    const far = await get(`/agents/memory?offset=${Number.MAX_SAFE_INTEGER}&sessionId=00000000-0000-4000-8000-00000000000A`);
    expect(far.status, far.text).toBe(200);
    expect(far.body.data).toMatchObject({ sessions: [], total: 0, offset: Number.MAX_SAFE_INTEGER });
  });
});
