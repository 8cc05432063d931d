import { afterAll, beforeAll, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The cost budget against the dearest model AI_PRICE_* can describe (~$1 a token written): the
 * recorded cost never passes maxCostUSD, even a nano-dollar.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({
    mode: 'all',
    env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_AGENT_PER_MINUTE: '5000', AI_PRICE_INPUT_PER_MILLION_USD: '0', AI_PRICE_OUTPUT_PER_MILLION_USD: '999999.999999999' },
  });
}, 120_000);
afterAll(() => app?.stop());

it('a budget a nano-dollar short of one token refuses the call, rather than paying for the token past it', async () => {
  const apiKey = app.bootstrap.apiKey;
  const projectId = await flowWalker(app, apiKey, app.bootstrap.organizationId).finishedProject('Dear model');
  const started = await call(app.url, '/api/agents/generate-spec', { apiKey, body: { projectId, options: { agents: ['designer'], budget: { maxCostUSD: 0.999999999 } } } });
  // The first call's prompt is free and its first token costs $0.999999999999999, recorded as $1: not affordable.
  expect([started.status, started.body.error?.code], started.text).toEqual([402, 'BUDGET_EXCEEDED']);
  expect(started.body.error.message).toContain('would cost more than the $0.999999999 left');
}, 60_000);
