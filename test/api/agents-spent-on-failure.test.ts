import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AiProviderError } from '../../control-plane/ai/ai-provider.ts';
import { createDatabase } from '../../control-plane/db/kysely-client.ts';
import { runAgentExecution } from '../../control-plane/domains/agents/run-agent-execution.ts';
import { createLogger } from '../../control-plane/logger.ts';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { scriptedProvider } from '../helpers/scripted-provider.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Calls that fail after the model answered are paid for: their tokens are recorded and counted.
 * And a worker that stops mid-call leaves the run to its job, not failed. The runs are made here,
 * by calling the worker's run directly (the app runs no worker).
 */
let app: TestApp;
let apiKey: string;
let walk: ReturnType<typeof flowWalker>;
let database: ReturnType<typeof createDatabase>;

const prices = { inputPerMillionUsd: 1, outputPerMillionUsd: 4 };
const log = createLogger('silent');
const post = (path: string, body: unknown) => call(app.url, `/api${path}`, { apiKey, body });
const status = async (executionId: string) => (await call(app.url, `/api/agents/execution/${executionId}/status`, { apiKey })).body.data;

async function startExecution() {
  const projectId = await walk.finishedProject(`Spent ${Math.random()}`);
  const started = await post('/agents/generate-spec', { projectId, options: { agents: ['designer'] } });
  expect(started.status, started.text).toBe(202);
  return started.body.data.executionId as string;
}

const run = (executionId: string, provider: ReturnType<typeof scriptedProvider>['provider'], signal?: AbortSignal) =>
  runAgentExecution({ ownerDb: database.db, log, provider, maxOutputTokens: 16_384, ...(signal ? { signal } : {}) }, app.bootstrap.tenantId, executionId);

beforeAll(async () => {
  app = await startTestApp({ mode: 'api', env: { RATE_LIMIT_AGENT_PER_MINUTE: '5000' } });
  apiKey = app.bootstrap.apiKey;
  walk = flowWalker(app, apiKey, app.bootstrap.organizationId);
  database = createDatabase(app.database.ownerUrl, { max: 4 });
}, 120_000);
afterAll(async () => {
  await database?.db.destroy();
  await app?.stop();
});

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
