import { afterAll, beforeAll, expect } from 'vitest';
import type { AiProvider } from '../../control-plane/ai/ai-provider.ts';
import { createDatabase } from '../../control-plane/db/kysely-client.ts';
import { runAgentExecution } from '../../control-plane/domains/agents/run-agent-execution.ts';
import { createLogger } from '../../control-plane/logger.ts';
import { flowWalker } from './flow-walk.ts';
import { call } from './http.ts';
import { startTestApp, type TestApp } from './test-app.ts';

/**
 * The service with no worker, for tests that run agent executions themselves — the worker's own
 * `runAgentExecution`, with a provider of the test's choosing: the jobs the requests enqueue stay
 * queued. Call at a test file's top level (it registers the file's beforeAll and afterAll).
 */
export function directAgentRuns(env: Record<string, string>) {
  const state = {} as { app: TestApp; apiKey: string; walk: ReturnType<typeof flowWalker>; database: ReturnType<typeof createDatabase> };
  const log = createLogger('silent');
  beforeAll(async () => {
    state.app = await startTestApp({ mode: 'api', env: { RATE_LIMIT_AGENT_PER_MINUTE: '5000', ...env } });
    state.apiKey = state.app.bootstrap.apiKey;
    state.walk = flowWalker(state.app, state.apiKey, state.app.bootstrap.organizationId);
    state.database = createDatabase(state.app.database.ownerUrl, { max: 4 });
  }, 120_000);
  afterAll(async () => {
    await state.database?.db.destroy();
    await state.app?.stop();
  });
  const api = (path: string, body?: unknown) => call(state.app.url, `/api${path}`, { apiKey: state.apiKey, ...(body === undefined ? {} : { body }) });

  return {
    get app() {
      return state.app;
    },
    get: (path: string) => api(path),
    /** A new project walked to SPECIFICATION, and an execution of it started over HTTP (left queued). */
    async startExecution(options: Record<string, unknown>) {
      const projectId = await state.walk.finishedProject(`Direct run ${Math.random()}`);
      const started = await api('/agents/generate-spec', { projectId, options });
      expect(started.status, started.text).toBe(202);
      return started.body.data.executionId as string;
    },
    status: async (executionId: string) => (await api(`/agents/execution/${executionId}/status`)).body.data,
    /** One run of the execution, as its job would make it. */
    run: (executionId: string, provider: AiProvider, extra: { maxOutputTokens?: number; signal?: AbortSignal } = {}) =>
      runAgentExecution(
        { ownerDb: state.database.db, log, provider, maxOutputTokens: extra.maxOutputTokens ?? 16_384, ...(extra.signal ? { signal: extra.signal } : {}) },
        state.app.bootstrap.tenantId,
        executionId,
      ),
  };
}
