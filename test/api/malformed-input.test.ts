import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Every route of the OpenAPI document, fed malformed input: wrong path parameters, bodies of the
 * wrong type, operator-looking objects, absurd query values. A caller's mistake must never be a
 * 500, and every refusal must be in the envelope with a catalog code.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
});
afterAll(() => app?.stop());

const badPathValues = ['not-a-uuid', '%00', '..%2F..%2Fetc', 'x'.repeat(300)];
// Raw JSON, so that keys like __proto__ reach the server as sent.
const badBodies = ['[]', '"a string"', '42', 'null', '{"$gt": 1}', '{"name": {"$ne": null}, "projectId": ["a"], "limit": -1}', '{"__proto__": {"isPlatformAdmin": true}, "constructor": {"prototype": {}}}'];
const badQueries = ['?limit=-1&offset=abc', '?limit=99999', '?status=%00&type=<script>', '?projectId=1&projectId=2'];

describe('malformed input on every route', () => {
  it('never answers 5xx and always answers in the envelope', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const failures: string[] = [];
    let calls = 0;
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        const paths = path.includes('{') ? badPathValues.map((value) => path.replace(/\{\w+\}/g, value)) : [path];
        for (const filled of paths) {
          const attempts = method === 'GET' || method === 'DELETE' ? badQueries.map((query) => ({ query, body: undefined })) : badBodies.map((body) => ({ query: '', body }));
          for (const { query, body } of attempts) {
            const response = await call(app.url, `/api${filled}${query}`, {
              method,
              apiKey: app.bootstrap.apiKey,
              ...(body !== undefined ? { rawBody: body, headers: { 'content-type': 'application/json' } } : {}),
            });
            calls += 1;
            const label = `${method} ${filled.slice(0, 60)}${query} ${body === undefined ? '' : body.slice(0, 40)} → ${response.status}`;
            if (response.status >= 500) failures.push(label);
            else if (response.status >= 400 && !(response.body?.success === false && typeof response.body.error?.code === 'string')) failures.push(`${label} (not an envelope)`);
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(200);
    expect(failures).toEqual([]);
  }, 120_000);
});

/**
 * Text PostgreSQL cannot store (NUL, an unpaired surrogate) in every string field of every request
 * body the document describes, and bodies nested far deeper than any field needs: each is the
 * caller's mistake, so a 4xx in the envelope, never a 500.
 */
const unstorable = ['a\u0000b', 'a\ud800b'];
type Schema = { type?: string | string[]; properties?: Record<string, Schema>; required?: string[] };

function bodyWith(schema: Schema, text: string): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const types = ([] as string[]).concat(property.type ?? []);
    if (types.includes('string')) body[name] = text;
    else if (types.includes('object')) body[name] = property.properties ? bodyWith(property, text) : { [text]: text };
  }
  return body;
}

describe('unstorable text and deep nesting', () => {
  it('answer 4xx in the envelope on every route with a body', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const failures: string[] = [];
    let calls = 0;
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const schema = operation.requestBody?.content['application/json']?.schema;
        if (!schema) continue;
        if (Object.keys(bodyWith(schema, '')).length === 0) continue;
        const filled = path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
        for (const text of unstorable) {
          const response = await call(app.url, `/api${filled}`, { method: method.toUpperCase(), apiKey: app.bootstrap.apiKey, body: bodyWith(schema, text) });
          calls += 1;
          if (response.status >= 500 || response.body?.success !== false) failures.push(`${method} ${path} ${JSON.stringify(text)} → ${response.status}`);
        }
      }
    }
    expect(calls).toBeGreaterThan(30);
    expect(failures).toEqual([]);
  }, 120_000);

  it.each([65, 6_000, 100_000])('a body nested %i levels deep is refused on REST and tRPC alike', async (depth) => {
    const rawBody = `{"name":"deep","metadata":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    const rest = await call(app.url, '/api/projects', { method: 'POST', apiKey: app.bootstrap.apiKey, rawBody, headers: { 'content-type': 'application/json' } });
    expect(rest.status).toBe(400);
    expect(rest.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('deeper than 64 levels') });
    const trpc = await call(app.url, '/trpc/projects.create', { method: 'POST', apiKey: app.bootstrap.apiKey, rawBody, headers: { 'content-type': 'application/json' } });
    expect(trpc.status).toBe(400);
    expect(trpc.body.error.data.code).toBe('VALIDATION_ERROR');
    // tRPC reads a body without a content type as JSON: it meets the same limit.
    const untyped = await fetch(`${app.url}/trpc/projects.create`, { method: 'POST', headers: { 'x-api-key': app.bootstrap.apiKey }, body: new TextEncoder().encode(rawBody) });
    expect(untyped.status).toBe(400);
    const { body: list } = await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey });
    expect(list.data.projects.filter((project: { name: string }) => project.name === 'deep')).toEqual([]);
  });
});
