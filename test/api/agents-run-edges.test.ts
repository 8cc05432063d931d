import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLINIC_ANSWERS_BY_PHASE, flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The worker's run at its edges, with the offline provider and a small AI_MAX_OUTPUT_TOKENS: an
 * answer longer than the cap fails the execution with agent_error (never a crash or a run left
 * running), every strategy with all five agents stores a specification GET /specification reads
 * back, and text that looks like a model's control token is only text.
 */
let app: TestApp;
let apiKey: string;
let walk: ReturnType<typeof flowWalker>;

const MAX_OUTPUT = 2_000;
const post = (path: string, body: unknown) => call(app.url, `/api${path}`, { apiKey, body });
const get = (path: string) => call(app.url, `/api${path}`, { apiKey });
type Call = { step: number; agent: string; task: string; promptHash: string; inputTokens: number; outputTokens: number; finishReason: string };

async function generate(projectId: string, options?: Record<string, unknown>) {
  const started = await post('/agents/generate-spec', { projectId, ...(options ? { options } : {}) });
  expect(started.status, started.text).toBe(202);
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const response = await get(`/agents/execution/${started.body.data.executionId}/status`);
    expect(response.status, response.text).toBe(200);
    if (response.body.data.status !== 'running') return response.body.data;
  }
  throw new Error('the agent execution did not settle within 30 s');
}

beforeAll(async () => {
  app = await startTestApp({
    mode: 'all',
    env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_AGENT_PER_MINUTE: '5000', AI_MAX_OUTPUT_TOKENS: String(MAX_OUTPUT), AI_PRICE_INPUT_PER_MILLION_USD: '3', AI_PRICE_OUTPUT_PER_MILLION_USD: '15' },
  });
  apiKey = app.bootstrap.apiKey;
  walk = flowWalker(app, apiKey, app.bootstrap.organizationId);
}, 120_000);
afterAll(() => app?.stop());

describe('an answer longer than AI_MAX_OUTPUT_TOKENS', () => {
  it('fails the execution with agent_error, its tokens counted and within the budget, whichever way the wave runs', async () => {
    // Many entities: the architect's sections are far longer than the cap.
    const entities = Array.from({ length: 150 }, (_, index) => `entity${index}`).join(', ');
    const answers = CLINIC_ANSWERS_BY_PHASE.map(([phase, byKey]): [string | null, Record<string, unknown>] => [phase, phase === null ? { ...byKey, entities } : phase === 'FEATURE_SELECTION' ? { ...byKey, features: ['bookings', 'sign-in', 'manage-entity0'] } : byKey]);
    const projectId = await walk.finishedProject('Many entities', answers);

    for (const strategy of ['sequential', 'parallel', 'debate', 'hierarchical']) {
      const execution = await generate(projectId, { strategy });
      expect(execution.status, strategy).toBe('failed');
      expect(execution.error, strategy).toEqual({ code: 'agent_error', message: expect.stringContaining(`AI_MAX_OUTPUT_TOKENS (${MAX_OUTPUT})`), checkpoint: expect.any(String) });
      const calls: Call[] = execution.calls;
      expect(calls.some((c) => c.agent === 'architect' && c.finishReason === 'length' && c.outputTokens === MAX_OUTPUT), strategy).toBe(true);
      expect(calls.every((c) => c.outputTokens <= MAX_OUTPUT), strategy).toBe(true);
      expect(execution.budget.tokensUsed, strategy).toBe(calls.reduce((sum, c) => sum + c.inputTokens + c.outputTokens, 0));
      expect(execution.budget.tokensUsed, strategy).toBeLessThanOrEqual(execution.budget.tokensLimit);
      expect(execution.budget.costIncurred, strategy).toBeLessThanOrEqual(execution.budget.costLimit);
    }
  }, 120_000);
});

describe('every strategy with all five agents', () => {
  it('stores a specification that GET /specification answers, drafted by the five', async () => {
    const projectId = await walk.finishedProject('Five agents');
    // What the compiler makes of the same answers: the offline agents draft exactly its sections.
    const queued = await post('/specification/compile', { projectId, options: { includeTaskGraph: true } });
    expect(queued.status, queued.text).toBe(202);
    let compiledSpec: Record<string, unknown> | undefined;
    for (const deadline = Date.now() + 30_000; !compiledSpec && Date.now() < deadline; await sleep(100)) {
      const response = await get(`/specification/${queued.body.data.specId}`);
      if (response.body.data.status === 'completed') compiledSpec = response.body.data.spec;
    }
    const { metadata: compiledMetadata, ...compiledSections } = compiledSpec!;
    for (const strategy of ['sequential', 'parallel', 'hierarchical', 'debate']) {
      const execution = await generate(projectId, { strategy, includeTaskGraph: true, budget: { maxTokens: 1_000_000, maxCostUSD: 100 } });
      expect(execution.status, strategy).toBe('completed');
      expect(execution.progress.completedSteps, strategy).toBe(execution.progress.totalSteps);
      const stored = await get(`/specification/${execution.result.specId}`);
      expect(stored.status, stored.text).toBe(200);
      expect(stored.body.data.spec).toEqual(execution.result.spec);
      const { metadata, ...sections } = execution.result.spec;
      expect(sections, strategy).toEqual(compiledSections);
      const { generator: _generator, draftedBy: _draftedBy, version: _version, ...rest } = metadata;
      const { generator: _compiler, version: _compiledVersion, ...compiledRest } = compiledMetadata as Record<string, unknown>;
      expect(rest, strategy).toEqual(compiledRest);
      expect(Object.values(execution.result.spec.metadata.draftedBy).sort()).toEqual(
        ['analyst', 'analyst', 'architect', 'architect', 'api-designer', 'api-designer', 'qa-engineer', 'designer'].sort(),
      );
    }
  }, 120_000);
});

describe('text that looks like a control token', () => {
  it('is counted as text, and the same answers make the same calls', async () => {
    const answers = CLINIC_ANSWERS_BY_PHASE.map(([phase, byKey]): [string | null, Record<string, unknown>] => [
      phase,
      phase === null ? { ...byKey, problem: 'Clinics <|endoftext|> lose <|im_start|>bookings<|fim_prefix|> after hours.' } : byKey,
    ]);
    const projectId = await walk.finishedProject('Control tokens', answers);
    const first = await generate(projectId, { agents: ['designer'] });
    expect(first.status, JSON.stringify(first.error)).toBe('completed');
    const second = await generate(projectId, { agents: ['designer'] });
    expect(second.calls.map((c: Call) => [c.promptHash, c.inputTokens, c.outputTokens])).toEqual(first.calls.map((c: Call) => [c.promptHash, c.inputTokens, c.outputTokens]));
  }, 60_000);
});
