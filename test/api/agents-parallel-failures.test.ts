import { describe, expect, it } from 'vitest';
import { directAgentRuns } from '../helpers/direct-agent-runs.ts';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { scriptedProvider as scriptProvider } from '../helpers/scripted-provider.ts';

/**
 * A parallel wave where the calls fail differently, run by calling the worker's run directly (the
 * app runs no worker) with a provider that answers as the offline one does, except where told.
 */
const runs = directAgentRuns({ AI_PRICE_INPUT_PER_MILLION_USD: '1', AI_PRICE_OUTPUT_PER_MILLION_USD: '4' });
const prices = { inputPerMillionUsd: 1, outputPerMillionUsd: 4 };
const scriptedProvider = (misbehave: Parameters<typeof scriptProvider>[1]) => scriptProvider(prices, misbehave);
const { startExecution, status } = runs;

describe('a parallel wave run at once', () => {
  it('keeps the calls that succeeded when another fails for a while, and the retry makes only the failed one', async () => {
    const executionId = await startExecution({ strategy: 'parallel', agents: ['architect', 'designer'] });
    const first = scriptedProvider((request) => (request.agent === 'designer' ? 'retryable' : undefined));
    await expect(runs.run(executionId, first.provider)).rejects.toThrow('503');
    expect((await status(executionId)).status).toBe('running');

    const retry = scriptedProvider(() => undefined);
    await runs.run(executionId, retry.provider);
    expect(retry.requests.map((request) => request.agent)).toEqual(['designer']);
    const done = await status(executionId);
    expect(done.status).toBe('completed');
    expect(done.calls.map((c: { step: number }) => c.step).sort()).toEqual([1, 2]);
    expect(done.budget.tokensUsed).toBe(done.calls.reduce((sum: number, c: { inputTokens: number; outputTokens: number }) => sum + c.inputTokens + c.outputTokens, 0));

    // A job that runs again after the execution completed makes no call.
    const again = scriptedProvider(() => undefined);
    await runs.run(executionId, again.provider);
    expect(again.requests).toEqual([]);
  }, 60_000);

  it('fails the execution at once when one call fails for good, though another failed only for a while: the spent call is never made again', async () => {
    const executionId = await startExecution({ strategy: 'parallel', agents: ['architect', 'designer'] });
    // The architect's call (first in the wave) meets a 503; the designer's writes past AI_MAX_OUTPUT_TOKENS, spending its tokens.
    const scripted = scriptedProvider((request) => (request.agent === 'architect' ? 'retryable' : 'too long'));
    await runs.run(executionId, scripted.provider).catch(() => undefined);
    const execution = await status(executionId);
    // A retry of the job would make the designer's call, and pay for it, again: it must not come.
    expect(execution.status).toBe('failed');
    expect(execution.error).toMatchObject({ code: 'agent_error', message: expect.stringContaining('AI_MAX_OUTPUT_TOKENS') });
    const [{ count }] = await ownerQuery(runs.app.database.ownerUrl, 'select count(*)::int as count from agent_calls where execution_id = $1', [executionId]);
    expect(count).toBe(1);
  }, 60_000);
});

describe("a parallel wave's calls answering out of order", () => {
  it("leave memory's sessions in the plan's order, whichever answered first", async () => {
    const executionId = await startExecution({ strategy: 'parallel', agents: ['architect', 'designer'] });
    // The architect (step 1) answers well after the designer (step 2).
    const slowArchitect = scriptedProvider(async (request) => (request.agent === 'architect' ? (await new Promise((done) => setTimeout(done, 300)), undefined) : undefined));
    await runs.run(executionId, slowArchitect.provider);
    expect((await status(executionId)).calls.map((c: { agent: string }) => c.agent)).toEqual(['designer', 'architect']);
    const memory = await runs.get(`/agents/memory?sessionId=${executionId}`);
    expect(memory.body.data.sessions.map((session: { agentName: string }) => session.agentName)).toEqual(['architect', 'designer']);
  }, 60_000);
});

describe('an execution that stops being the run\'s during a call', () => {
  it('deleted with its project: the run ends quietly, recording nothing and storing no specification', async () => {
    const executionId = await startExecution({ strategy: 'parallel', agents: ['architect', 'designer'] });
    const [{ project_id: projectId }] = await ownerQuery(runs.app.database.ownerUrl, 'select project_id from agent_executions where id = $1', [executionId]);
    const scripted = scriptedProvider(async (request) => {
      if (request.agent === 'designer') expect((await call(runs.app.url, `/api/projects/${projectId}`, { apiKey: runs.app.bootstrap.apiKey, method: 'DELETE' })).status).toBe(200);
      return undefined;
    });
    await runs.run(executionId, scripted.provider);
    const counts = await ownerQuery(runs.app.database.ownerUrl, `select (select count(*)::int from agent_calls where execution_id = $1) as calls, (select count(*)::int from specifications where project_id = $2) as specs`, [executionId, projectId]);
    expect(counts).toEqual([{ calls: 0, specs: 0 }]);
  }, 60_000);

  it('failed under a running call: the call is not recorded and the failure, with its checkpoint, stands', async () => {
    const executionId = await startExecution({ agents: ['designer'] });
    const scripted = scriptedProvider(async () => {
      await ownerQuery(runs.app.database.ownerUrl, `update agent_executions set status = 'failed', error_code = 'agent_error', error_message = 'interrupted', checkpoint = gen_random_uuid() where id = $1`, [executionId]);
      return undefined;
    });
    await runs.run(executionId, scripted.provider);
    const execution = await status(executionId);
    expect(execution).toMatchObject({ status: 'failed', error: { code: 'agent_error', message: 'interrupted' }, calls: [], budget: { tokensUsed: 0 } });
  }, 60_000);
});
