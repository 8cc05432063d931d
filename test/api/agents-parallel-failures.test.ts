import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../control-plane/db/kysely-client.ts';
import { runAgentExecution } from '../../control-plane/domains/agents/run-agent-execution.ts';
import { createLogger } from '../../control-plane/logger.ts';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { scriptedProvider as scriptProvider } from '../helpers/scripted-provider.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A parallel wave where the calls fail differently, run by calling the worker's run directly (the
 * app runs no worker) with a provider that answers as the offline one does, except where told.
 */
let app: TestApp;
let apiKey: string;
let walk: ReturnType<typeof flowWalker>;
let database: ReturnType<typeof createDatabase>;

const MAX_OUTPUT = 16_384;
const prices = { inputPerMillionUsd: 1, outputPerMillionUsd: 4 };
const log = createLogger('silent');
const post = (path: string, body: unknown) => call(app.url, `/api${path}`, { apiKey, body });
const get = (path: string) => call(app.url, `/api${path}`, { apiKey });

const scriptedProvider = (misbehave: Parameters<typeof scriptProvider>[1]) => scriptProvider(prices, misbehave);

async function startExecution(options: Record<string, unknown>) {
  const projectId = await walk.finishedProject(`Parallel ${Math.random()}`);
  const started = await post('/agents/generate-spec', { projectId, options });
  expect(started.status, started.text).toBe(202);
  return started.body.data.executionId as string;
}

const status = async (executionId: string) => (await get(`/agents/execution/${executionId}/status`)).body.data;

beforeAll(async () => {
  // No worker: the jobs the requests enqueue stay queued, and the tests run the executions themselves.
  app = await startTestApp({ mode: 'api', env: { RATE_LIMIT_AGENT_PER_MINUTE: '5000', AI_PRICE_INPUT_PER_MILLION_USD: '1', AI_PRICE_OUTPUT_PER_MILLION_USD: '4' } });
  apiKey = app.bootstrap.apiKey;
  walk = flowWalker(app, apiKey, app.bootstrap.organizationId);
  database = createDatabase(app.database.ownerUrl, { max: 4 });
}, 120_000);
afterAll(async () => {
  await database?.db.destroy();
  await app?.stop();
});

describe('a parallel wave run at once', () => {
  it('keeps the calls that succeeded when another fails for a while, and the retry makes only the failed one', async () => {
    const executionId = await startExecution({ strategy: 'parallel', agents: ['architect', 'designer'] });
    const tenantId = app.bootstrap.tenantId;
    const first = scriptedProvider((request) => (request.agent === 'designer' ? 'retryable' : undefined));
    await expect(runAgentExecution({ ownerDb: database.db, log, provider: first.provider, maxOutputTokens: MAX_OUTPUT }, tenantId, executionId)).rejects.toThrow('503');
    expect((await status(executionId)).status).toBe('running');

    const retry = scriptedProvider(() => undefined);
    await runAgentExecution({ ownerDb: database.db, log, provider: retry.provider, maxOutputTokens: MAX_OUTPUT }, tenantId, executionId);
    expect(retry.requests.map((request) => request.agent)).toEqual(['designer']);
    const done = await status(executionId);
    expect(done.status).toBe('completed');
    expect(done.calls.map((c: { step: number }) => c.step).sort()).toEqual([1, 2]);
    expect(done.budget.tokensUsed).toBe(done.calls.reduce((sum: number, c: { inputTokens: number; outputTokens: number }) => sum + c.inputTokens + c.outputTokens, 0));

    // A job that runs again after the execution completed makes no call.
    const again = scriptedProvider(() => undefined);
    await runAgentExecution({ ownerDb: database.db, log, provider: again.provider, maxOutputTokens: MAX_OUTPUT }, tenantId, executionId);
    expect(again.requests).toEqual([]);
  }, 60_000);

  it('fails the execution at once when one call fails for good, though another failed only for a while: the spent call is never made again', async () => {
    const executionId = await startExecution({ strategy: 'parallel', agents: ['architect', 'designer'] });
    const tenantId = app.bootstrap.tenantId;
    // The architect's call (first in the wave) meets a 503; the designer's writes past AI_MAX_OUTPUT_TOKENS, spending its tokens.
    const scripted = scriptedProvider((request) => (request.agent === 'architect' ? 'retryable' : 'too long'));
    await runAgentExecution({ ownerDb: database.db, log, provider: scripted.provider, maxOutputTokens: MAX_OUTPUT }, tenantId, executionId).catch(() => undefined);
    const execution = await status(executionId);
    // A retry of the job would make the designer's call, and pay for it, again: it must not come.
    expect(execution.status).toBe('failed');
    expect(execution.error).toMatchObject({ code: 'agent_error', message: expect.stringContaining('AI_MAX_OUTPUT_TOKENS') });
    const [{ count }] = await ownerQuery(app.database.ownerUrl, 'select count(*)::int as count from agent_calls where execution_id = $1', [executionId]);
    expect(count).toBe(1);
  }, 60_000);
});

describe("a parallel wave's calls answering out of order", () => {
  it("leave memory's sessions in the plan's order, whichever answered first", async () => {
    const executionId = await startExecution({ strategy: 'parallel', agents: ['architect', 'designer'] });
    // The architect (step 1) answers well after the designer (step 2).
    const slowArchitect = scriptedProvider(async (request) => (request.agent === 'architect' ? (await new Promise((done) => setTimeout(done, 300)), undefined) : undefined));
    await runAgentExecution({ ownerDb: database.db, log, provider: slowArchitect.provider, maxOutputTokens: MAX_OUTPUT }, app.bootstrap.tenantId, executionId);
    expect((await status(executionId)).calls.map((c: { agent: string }) => c.agent)).toEqual(['designer', 'architect']);
    const memory = await get(`/agents/memory?sessionId=${executionId}`);
    expect(memory.body.data.sessions.map((session: { agentName: string }) => session.agentName)).toEqual(['architect', 'designer']);
  }, 60_000);
});

describe('an execution that stops being the run\'s during a call', () => {
  it('deleted with its project: the run ends quietly, recording nothing and storing no specification', async () => {
    const executionId = await startExecution({ strategy: 'parallel', agents: ['architect', 'designer'] });
    const [{ project_id: projectId }] = await ownerQuery(app.database.ownerUrl, 'select project_id from agent_executions where id = $1', [executionId]);
    const scripted = scriptedProvider(async (request) => {
      if (request.agent === 'designer') expect((await call(app.url, `/api/projects/${projectId}`, { apiKey, method: 'DELETE' })).status).toBe(200);
      return undefined;
    });
    await runAgentExecution({ ownerDb: database.db, log, provider: scripted.provider, maxOutputTokens: MAX_OUTPUT }, app.bootstrap.tenantId, executionId);
    const counts = await ownerQuery(app.database.ownerUrl, `select (select count(*)::int from agent_calls where execution_id = $1) as calls, (select count(*)::int from specifications where project_id = $2) as specs`, [executionId, projectId]);
    expect(counts).toEqual([{ calls: 0, specs: 0 }]);
  }, 60_000);

  it('failed under a running call: the call is not recorded and the failure, with its checkpoint, stands', async () => {
    const executionId = await startExecution({ agents: ['designer'] });
    const scripted = scriptedProvider(async () => {
      await ownerQuery(app.database.ownerUrl, `update agent_executions set status = 'failed', error_code = 'agent_error', error_message = 'interrupted', checkpoint = gen_random_uuid() where id = $1`, [executionId]);
      return undefined;
    });
    await runAgentExecution({ ownerDb: database.db, log, provider: scripted.provider, maxOutputTokens: MAX_OUTPUT }, app.bootstrap.tenantId, executionId);
    const execution = await status(executionId);
    expect(execution).toMatchObject({ status: 'failed', error: { code: 'agent_error', message: 'interrupted' }, calls: [], budget: { tokensUsed: 0 } });
  }, 60_000);
});
