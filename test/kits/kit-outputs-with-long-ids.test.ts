import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledExecution } from '../helpers/bundled-execution.ts';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
let orgId: string;
let projectId: string;

beforeAll(async () => {
  app = await startTestApp({ mode: 'all' });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Long ids' } })).body.data.id;
});
afterAll(() => app?.stop());

describe('an output whose manifest id is longer than 200 characters', () => {
  it('is served by that id, as the execution lists it', async () => {
    // A manifest's output id is a slug of any length; a composite or forEach makes it longer still.
    const longId = `generated-${'section-'.repeat(60)}readme`;
    const kit = sampleKit({ id: 'long-output-ids' });
    kit.manifest.outputs[2].id = longId;
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
    const started = await call(app.url, `/api/${orgId}/kits/long-output-ids/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    expect(started.status, started.text).toBe(201);
    const done = await waitForExecution(app.url, key, orgId, started.body.data.executionId);
    expect(done.status).toBe('completed');
    const listed = done.outputs.find((output: { outputId: string }) => output.outputId === longId);
    expect(listed).toMatchObject({ outputId: longId, status: 'valid' });

    const output = await call(app.url, `/api/${orgId}/kits/executions/${done.id}/outputs/${longId}`, { apiKey: key });
    expect([output.status, output.body.data ?? output.body.error]).toEqual([200, expect.objectContaining({ id: listed.id, outputId: longId, filename: listed.filename })]);
    expect(output.body.data.content.length).toBeGreaterThan(0);
  });
});

describe('an id no row has, kilobytes long', () => {
  it('is NOT_FOUND quoting only its first 128 characters, an output id as a kit id or version would be', async () => {
    const executionId = await bundledExecution(app, Buffer.from('a bundle'));
    // As long as a request line carries: an output id may be.
    const longId = `missing-${'output-'.repeat(2_140)}id`;
    const output = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/outputs/${longId}`, { apiKey: key });
    expect([output.status, output.body.error]).toEqual([404, { code: 'NOT_FOUND', message: `Output ${longId.slice(0, 128)}… of this execution was not found` }]);
    expect(output.text.length).toBeLessThan(400);
    // Every id a schema bounds is quoted whole: the longest kit id a route takes, and a version.
    const longKitId = `no-${'kit-'.repeat(24)}x`;
    expect(longKitId.length).toBe(100);
    const kit = await call(app.url, `/api/${orgId}/kits/${longKitId}`, { apiKey: key });
    expect([kit.status, kit.body.error?.message]).toEqual([404, `The kit ${longKitId} was not found`]);
    const version = `1.0.0-${'a'.repeat(122)}`;
    const run = await call(app.url, `/api/${orgId}/kits/project-docs/execute`, { apiKey: key, body: { ...sampleExecutionBody(projectId), version } });
    expect([run.status, run.body.error?.message]).toEqual([404, `Version ${version} of kit project-docs was not found`]);
  });
});
