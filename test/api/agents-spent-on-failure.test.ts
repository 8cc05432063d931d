import { describe, expect, it } from 'vitest';
import { AiProviderError } from '../../control-plane/ai/ai-provider.ts';
import { directAgentRuns } from '../helpers/direct-agent-runs.ts';
import { scriptedProvider } from '../helpers/scripted-provider.ts';

/**
 * Calls that fail after the model answered are paid for: their tokens are recorded and counted.
 * And a worker that stops mid-call leaves the run to its job, not failed. The runs are made here,
 * by calling the worker's run directly (the app runs no worker).
 */
const runs = directAgentRuns({});
const prices = { inputPerMillionUsd: 1, outputPerMillionUsd: 4 };
const startExecution = () => runs.startExecution({ agents: ['designer'] });
const { status } = runs;
const run = (executionId: string, provider: ReturnType<typeof scriptedProvider>['provider'], signal?: AbortSignal) => runs.run(executionId, provider, signal ? { signal } : {});

describe('a call that fails after the model answered', () => {
  it('is recorded with what it spent when the answer does not fit the schema, and the execution fails agent_error', async () => {
    const executionId = await startExecution();
    const { provider } = scriptedProvider(prices, () => {
      throw new AiProviderError('The model answered output that does not match the schema', false, { usage: { inputTokens: 300, outputTokens: 40 } });
    });
    await run(executionId, provider);
    const execution = await status(executionId);
    expect(execution).toMatchObject({ status: 'failed', error: { code: 'agent_error' }, budget: { tokensUsed: 340 }, progress: { completedSteps: 0 } });
    expect(execution.calls).toEqual([expect.objectContaining({ finishReason: 'error', inputTokens: 300, outputTokens: 40, costUSD: (300 * 1 + 40 * 4) / 1e6 })]);
  }, 60_000);

  it('is recorded, and fails the execution, when the answer holds text the database cannot store', async () => {
    const executionId = await startExecution();
    const { provider } = scriptedProvider(prices, () => ({
      output: { designSystem: { visualStyle: 'nul \u0000 here', brandColors: null, accessibility: null } },
      finishReason: 'stop',
      usage: { inputTokens: 200, outputTokens: 30 },
    }));
    await run(executionId, provider);
    const execution = await status(executionId);
    expect(execution).toMatchObject({ status: 'failed', error: { code: 'agent_error', message: expect.stringContaining('cannot be stored') }, budget: { tokensUsed: 230 } });
    expect(execution.calls.map((c: { finishReason: string }) => c.finishReason)).toEqual(['error']);
  }, 60_000);
});

describe('a worker that stops during a call', () => {
  it('leaves the execution running for its job to run again, whatever the cancelled call said', async () => {
    const executionId = await startExecution();
    const stopping = new AbortController();
    const { provider } = scriptedProvider(prices, () => {
      stopping.abort();
      throw new AiProviderError('The call was cancelled', false);
    });
    await expect(run(executionId, provider, stopping.signal)).rejects.toThrow('cancelled');
    expect(await status(executionId)).toMatchObject({ status: 'running', error: null, calls: [] });
    // The job's next run finishes it.
    await run(executionId, scriptedProvider(prices, () => undefined).provider);
    expect((await status(executionId)).status).toBe('completed');
  }, 60_000);
});
