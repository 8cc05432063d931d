// Kit output schemas are checked on the host with RE2 (linear time): publishing refuses a pattern
// RE2 cannot run, and a catastrophic-backtracking pattern cannot stall the worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
let orgId: string;

beforeAll(async () => {
  app = await startTestApp({ mode: 'all' });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

const publish = (body: unknown) => call(app.url, `/api/${orgId}/kits`, { apiKey: key, body });

describe('kit schema patterns', () => {
  it('refuses at publish a schema pattern that needs lookahead, naming the schema file, and stores nothing', async () => {
    const kit = sampleKit({ id: 'lookahead-pattern' });
    kit.files['schemas/openapi.schema.json'] = JSON.stringify({ type: 'object', properties: { openapi: { type: 'string', pattern: '^(?!2\\.)\\d' } } });
    const response = await publish(kit);
    expect(response.status, response.text).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(response.body.error.message).toContain('schemas/openapi.schema.json: pattern "^(?!2\\.)\\d" is not supported by RE2');
    expect(response.body.error.details.problems).toEqual([expect.objectContaining({ file: 'schemas/openapi.schema.json' })]);
    expect((await call(app.url, `/api/${orgId}/kits/lookahead-pattern`, { apiKey: key })).status).toBe(404);
  });

  it('runs a kit whose pattern backtracks catastrophically to its normal end: the output is invalid', async () => {
    const kit = sampleKit({ id: 'backtracking-pattern' });
    kit.files['schemas/openapi.schema.json'] = JSON.stringify({ type: 'object', properties: { v: { type: 'string', pattern: '^(a+)+$' } } });
    kit.files['templates/openapi.json.hbs'] = JSON.stringify({ v: `${'a'.repeat(48)}!` });
    expect((await publish(kit)).status).toBe(201);
    const project = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Patterns' } });
    expect(project.status, project.text).toBe(201);
    const started = await call(app.url, `/api/${orgId}/kits/backtracking-pattern/execute`, { apiKey: key, body: sampleExecutionBody(project.body.data.id) });
    expect(started.status, started.text).toBe(201);
    const execution = await waitForExecution(app.url, key, orgId, started.body.data.executionId);
    expect(execution).toMatchObject({ status: 'partial', outputsFailed: 1 });
    const openapi = execution.outputs.find((o: { outputId: string }) => o.outputId === 'openapi');
    expect(openapi).toMatchObject({ status: 'invalid', validationErrors: ['schema: /v: must match pattern "^(a+)+$"'] });
  });
});
