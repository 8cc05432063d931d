import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { call } from './http.ts';
import type { TestApp } from './test-app.ts';

/** Polls GET /api/specification/{specId} as `apiKey` until it has left `compiling`; answers its data. */
export async function settledSpecification(app: TestApp, apiKey: string, specId: string, timeoutMs = 30_000) {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(100)) {
    const response = await call(app.url, `/api/specification/${specId}`, { apiKey });
    expect(response.status, response.text).toBe(200);
    if (response.body.data.status !== 'compiling') return response.body.data;
  }
  throw new Error(`the specification did not compile within ${timeoutMs / 1000} s`);
}

/** Compiles the project's specification (202 asserted) and answers it once it has left `compiling`. */
export async function compiledSpecification(app: TestApp, apiKey: string, projectId: string, options: Record<string, unknown> = {}) {
  const queued = await call(app.url, '/api/specification/compile', { apiKey, body: { projectId, options } });
  expect(queued.status, queued.text).toBe(202);
  return settledSpecification(app, apiKey, queued.body.data.specId);
}
