import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpecwrightClient, serviceErrorOf } from '../../sdk/index.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { failureOf } from './failure-of.ts';

/** A call traced end to end: the X-Request-ID the caller picks is the one the service logs and answers with. */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

const loggedRequestIds = () => app.logLines.map((line) => line.requestId);

describe("a call's own request id", () => {
  it('reaches the service for a query made beside others and for a mutation', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const missing = '00000000-0000-4000-8000-000000000000';
    const [traced, , untraced] = await Promise.all([
      failureOf(client.projects.get.query({ projectId: missing }, { context: { requestId: 'deploy-42.read' } })),
      client.me.get.query(),
      failureOf(client.projects.get.query({ projectId: missing })),
    ]);
    expect(serviceErrorOf(traced)).toMatchObject({ code: 'NOT_FOUND', requestId: 'deploy-42.read' });
    expect(serviceErrorOf(untraced)?.requestId).toMatch(/^[0-9a-f-]{36}$/);

    const key = await client.apiKeys.create.mutate({ name: 'traced' }, { context: { requestId: 'deploy-42:key' } });
    expect(key.name).toBe('traced');
    expect(loggedRequestIds()).toContain('deploy-42:key');
  });

  it('is refused before sending when the service would replace it', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const refused = await failureOf(client.me.get.query(undefined, { context: { requestId: 'has spaces' } }));
    expect(refused.message).toBe('context.requestId must be 1–128 of A-Z a-z 0-9 . _ : - (the service would replace it with one of its own)');
  });
});
