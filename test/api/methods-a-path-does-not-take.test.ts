import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledExecution } from '../helpers/bundled-execution.ts';
import { UNKNOWN_UUID } from '../helpers/documented-operations.ts';
import { call, type ApiResponse } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
let link: string;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_COMPILATION_PER_MINUTE: '1000', RATE_LIMIT_AGENT_PER_MINUTE: '1000' } });
  key = app.bootstrap.apiKey;
  const executionId = await bundledExecution(app, Buffer.from('a bundle'));
  const handed = await call(app.url, `/api/${app.bootstrap.organizationId}/kits/executions/${executionId}/bundle`, { apiKey: key });
  expect(handed.status, handed.text).toBe(200);
  link = handed.body.data.downloadUrl;
});
afterAll(() => app?.stop());

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** What a user sees of a 405: status, Allow, the envelope's code, and the headers every answer carries. */
function expectMethodNotAllowed(response: ApiResponse, allow: string) {
  expect([response.status, response.headers.get('allow'), response.body?.error?.code]).toEqual([405, allow, 'METHOD_NOT_ALLOWED']);
  expect(response.body).toMatchObject({ success: false, metadata: { requestId: response.headers.get('x-request-id'), timestamp: expect.any(String) } });
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('x-ratelimit-limit')).toBeTruthy();
}

describe('a method a known /api path does not take', () => {
  it('answers 405 METHOD_NOT_ALLOWED with Allow, in the envelope (DELETE /api/me, PUT /api/projects)', async () => {
    expectMethodNotAllowed(await call(app.url, '/api/me', { method: 'DELETE', apiKey: key }), 'GET, HEAD');
    expectMethodNotAllowed(await call(app.url, '/api/me', { method: 'PATCH', apiKey: key, body: {} }), 'GET, HEAD');
    const name = `Put ${crypto.randomUUID()}`;
    expectMethodNotAllowed(await call(app.url, '/api/projects', { method: 'PUT', apiKey: key, body: { name } }), 'GET, HEAD, POST');
    expect(await ownerQuery(app.database.ownerUrl, 'select id from projects where name = $1', [name])).toEqual([]);
    // Without credentials too: which methods a path takes is in the public document.
    expectMethodNotAllowed(await call(app.url, '/api/me', { method: 'DELETE' }), 'GET, HEAD');
  });

  it('answers 405 with Allow: GET, HEAD for a POST, PUT or DELETE to a download link, whatever its body', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      for (const options of [{}, { body: {} }, { rawBody: 'x', headers: { 'content-type': 'text/plain' } }]) {
        expectMethodNotAllowed(await call(app.url, link, { method, ...options }), 'GET, HEAD');
      }
    }
    expect((await call(app.url, link)).status).toBe(200);
  });

  it('answers each path of the OpenAPI document with exactly the methods the document lists for it', async () => {
    const document = (await call(app.url, '/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const templates = Object.entries(document.paths).map(([template, operations]) => ({
      pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`),
      methods: Object.keys(operations).map((method) => method.toUpperCase()),
    }));
    const outcomes: unknown[] = [];
    const expected: unknown[] = [];
    for (const template of Object.keys(document.paths)) {
      const path = template.replace(/\{\w+\}/g, UNKNOWN_UUID);
      // A concrete path can match two templates (`/{orgId}/kits/executions`, `/{orgId}/kits/{kitId}`): either's methods are its own.
      const listed = new Set(templates.filter((t) => t.pattern.test(path)).flatMap((t) => t.methods));
      // HEAD goes wherever GET does, whether the document lists it (the download link) or not.
      const allow = [...new Set([...listed, ...(listed.has('GET') ? ['HEAD'] : [])])].sort().join(', ');
      for (const method of METHODS.filter((m) => !listed.has(m))) {
        const response = await call(app.url, `/api${path}`, { method, apiKey: key });
        outcomes.push([method, template, response.status, response.headers.get('allow'), response.body?.error?.code]);
        expected.push([method, template, 405, allow, 'METHOD_NOT_ALLOWED']);
      }
    }
    expect(outcomes.length).toBeGreaterThan(20);
    expect(outcomes).toEqual(expected);
  });

  it('answers a HEAD of a path without GET with 405 and no body', async () => {
    const response = await call(app.url, '/api/developer/api-keys/' + UNKNOWN_UUID, { method: 'HEAD', apiKey: key });
    expect([response.status, response.headers.get('allow'), response.text]).toEqual([405, 'DELETE', '']);
  });

  it('keeps NOT_FOUND for a path the document does not list, and OpenAPI JSON takes GET alone', async () => {
    const unknown = await call(app.url, '/api/no/such/route', { method: 'DELETE', apiKey: key });
    expect([unknown.status, unknown.headers.get('allow'), unknown.body.error.code]).toEqual([404, null, 'NOT_FOUND']);
    expectMethodNotAllowed(await call(app.url, '/api/openapi.json', { method: 'POST', body: {} }), 'GET, HEAD');
  });

  it('is stated in the OpenAPI document', async () => {
    const document = (await call(app.url, '/api/openapi.json')).body;
    expect(document.info.description).toContain('405 METHOD_NOT_ALLOWED');
    expect(document.components.schemas.ErrorEnvelope.properties.error.properties.code.enum).toContain('METHOD_NOT_ALLOWED');
  });
});
