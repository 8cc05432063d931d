import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { tableSnapshot } from '../helpers/table-snapshot.ts';
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
  it('never answers 5xx, always answers in the envelope, and writes nothing', async () => {
    const before = await tableSnapshot(app.database.ownerUrl);
    const { body: document } = await call(app.url, '/api/openapi.json');
    const failures: string[] = [];
    let calls = 0;
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        const paths = path.includes('{') ? badPathValues.map((value) => path.replace(/\{\w+\}/g, value)) : [path];
        for (const filled of paths) {
          const attempts = ['GET', 'HEAD', 'DELETE'].includes(method) ? badQueries.map((query) => ({ query, body: undefined })) : badBodies.map((body) => ({ query: '', body }));
          for (const { query, body } of attempts) {
            const response = await call(app.url, `/api${filled}${query}`, {
              method,
              apiKey: app.bootstrap.apiKey,
              ...(body !== undefined ? { rawBody: body, headers: { 'content-type': 'application/json' } } : {}),
            });
            calls += 1;
            const label = `${method} ${filled.slice(0, 60)}${query} ${body === undefined ? '' : body.slice(0, 40)} → ${response.status}`;
            if (response.status >= 500) failures.push(label);
            // A HEAD answer has no body: the envelope is GET's to show.
            else if (method === 'HEAD') {
              if (response.text !== '') failures.push(`${label} (a body)`);
            } else if (response.status >= 400 && !(response.body?.success === false && typeof response.body.error?.code === 'string')) failures.push(`${label} (not an envelope)`);
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(200);
    expect(failures).toEqual([]);
    expect(await tableSnapshot(app.database.ownerUrl)).toEqual(before);
  }, 120_000);
});

describe('a percent-encoded path parameter', () => {
  it('is read decoded, as RFC 3986 reads it: %2D is a hyphen', async () => {
    const { apiKey, organizationId } = app.bootstrap;
    const project = (await call(app.url, '/api/projects', { apiKey, body: { name: 'Encoded' } })).body.data;
    const encoded = await call(app.url, `/api/projects/${project.id.replaceAll('-', '%2D')}`, { apiKey });
    expect([encoded.status, encoded.body.data?.id]).toEqual([200, project.id]);
    const kit = await call(app.url, `/api/${organizationId}/kits/project%2Ddocs`, { apiKey });
    expect([kit.status, kit.body.data?.kitId]).toEqual([200, 'project-docs']);
    // Decoded, a parameter can hold what PostgreSQL cannot store: still the caller's mistake.
    for (const path of [`/api/${organizationId}/kits/a%00b`, `/api/${organizationId}/kits/executions/${project.id}/outputs/%00`, `/api/projects/${project.id.slice(0, -1)}%00`]) {
      const response = await call(app.url, path, { apiKey });
      expect([path, response.status < 500, response.body.success]).toEqual([path, true, false]);
    }
  });
});

describe('a path that is not valid URL encoding', () => {
  it.each(['%E0%A4%A', 'abc%ZZ'])('%s is refused as a bad path, not as an unreadable body (REST and tRPC)', async (bad) => {
    const rest = await call(app.url, `/api/downloads/${bad}`);
    expect([rest.status, rest.body?.error]).toEqual([400, { code: 'VALIDATION_ERROR', message: 'The request path is not valid URL encoding' }]);
    // The same in a path parameter of the REST projection.
    const projected = await call(app.url, `/api/projects/${bad}`, { apiKey: app.bootstrap.apiKey });
    expect([projected.status, projected.body?.error]).toEqual([400, { code: 'VALIDATION_ERROR', message: 'The request path is not valid URL encoding' }]);
    // tRPC decodes its own path and says so in its words; the code and status are the same.
    const trpc = await call(app.url, `/trpc/projects.get${bad}`, { apiKey: app.bootstrap.apiKey });
    expect([trpc.status, trpc.body?.error?.data?.code]).toEqual([400, 'VALIDATION_ERROR']);
  });
});

/**
 * Text PostgreSQL cannot store (NUL, an unpaired surrogate) in every string field of every request
 * body the document describes, and bodies nested far deeper than any field needs: each is the
 * caller's mistake, so a 4xx in the envelope, never a 500.
 */
const unstorable = ['a\u0000b', 'a\ud800b'];
type Schema = { type?: string | string[]; format?: string; enum?: unknown[]; properties?: Record<string, Schema>; required?: string[] };

/** Valid values for strings whose format the document states, so that those fields pass and the rest are judged alone. */
const validByFormat: Record<string, string> = { email: 'someone@example.com', uuid: '00000000-0000-4000-8000-000000000000', uri: 'https://example.com/x' };

/**
 * A body with `text` in every free string field (and as a key of every free-form object), valid
 * values where the document states a format or enum, and the fields that carry `text`.
 */
function bodyWith(schema: Schema, text: string, prefix = ''): { body: Record<string, unknown>; fields: string[] } {
  const body: Record<string, unknown> = {};
  const fields: string[] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const types = ([] as string[]).concat(property.type ?? []);
    if (property.enum) body[name] = property.enum[0];
    else if (types.includes('string') && property.format && validByFormat[property.format]) body[name] = validByFormat[property.format];
    else if (types.includes('string')) {
      body[name] = text;
      fields.push(`${prefix}${name}`);
    } else if (types.includes('object') && property.properties) {
      const nested = bodyWith(property, text, `${prefix}${name}.`);
      body[name] = nested.body;
      fields.push(...nested.fields);
    } else if (types.includes('object')) {
      body[name] = { [text]: text };
      fields.push(`${prefix}${name}`);
    }
  }
  return { body, fields };
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
        if (bodyWith(schema, '').fields.length === 0) continue;
        const filled = path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
        for (const text of unstorable) {
          const { body, fields } = bodyWith(schema, text);
          const response = await call(app.url, `/api${filled}`, { method: method.toUpperCase(), apiKey: app.bootstrap.apiKey, body });
          calls += 1;
          const label = `${method} ${path} ${JSON.stringify(text)} → ${response.status}`;
          if (response.status !== 400 || response.body?.error?.code !== 'VALIDATION_ERROR') failures.push(label);
          // Each field is named, by input validation (not by PostgreSQL's refusal, which names none).
          const named: string[] = response.body?.error?.details?.issues?.map((issue: { field: string }) => issue.field) ?? [];
          const unnamed = fields.filter((field) => !named.some((name) => name === field || name.startsWith(`${field}.`)));
          if (unnamed.length > 0) failures.push(`${label}: ${unnamed.join(', ')} not named`);
        }
      }
    }
    expect(calls).toBeGreaterThan(20);
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

describe('JSON that JavaScript would not keep as sent', () => {
  const listedNames = async () =>
    ((await call(app.url, '/api/projects?limit=200', { apiKey: app.bootstrap.apiKey })).body.data.projects as Array<{ name: string }>).map((p) => p.name);

  it.each([
    ['a __proto__ key in free-form metadata', '{"name":"proto","metadata":{"__proto__":{"owner":"ops"},"keep":1}}', 'metadata.__proto__', 'is not a key that can be stored'],
    ['a nested __proto__ key', '{"name":"proto nested","metadata":{"a":{"__proto__":{"x":1}}}}', 'metadata.a.__proto__', 'is not a key that can be stored'],
    ['a number too large for a double', '{"name":"huge","metadata":{"n":1e400}}', 'metadata.n', 'is a number too large to represent'],
    ['one in an array', '{"name":"huge in array","metadata":{"list":[1,-1e999]}}', 'metadata.list.1', 'is a number too large to represent'],
  ])('%s is refused by field on REST and tRPC, and nothing is stored', async (_label, rawBody, field, issue) => {
    for (const path of ['/api/projects', '/trpc/projects.create']) {
      const response = await call(app.url, path, { method: 'POST', apiKey: app.bootstrap.apiKey, rawBody, headers: { 'content-type': 'application/json' } });
      expect(response.status, `${path}: ${response.text}`).toBe(400);
      const details = path.startsWith('/trpc') ? response.body.error.data.details : response.body.error.details;
      expect(details.issues).toEqual([{ field, issue }]);
    }
    expect(await listedNames()).not.toContain(JSON.parse(rawBody.replace(/1e\d+|-1e\d+/g, '0')).name);
  });

  it('a key that only looks alike is kept as sent', async () => {
    const created = await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, body: { name: 'lookalike', metadata: { __proto: 1, constructor: 'c', prototype: 'p', n: 1e308 } } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.metadata).toEqual({ __proto: 1, constructor: 'c', prototype: 'p', n: 1e308 });
  });
});

describe('a field of the wrong type', () => {
  it('is named once, for its type, not also for checks meant for the type it should have been', async () => {
    const refused = await call(app.url, '/api/organizations', { apiKey: app.bootstrap.apiKey, body: { name: 'Acme', slug: ['abc'] } });
    expect([refused.status, refused.body.error.details.issues]).toEqual([400, [{ field: 'slug', issue: 'Invalid input: expected string, received array' }]]);
    const bothWrong = await call(app.url, '/api/organizations', { apiKey: app.bootstrap.apiKey, body: { name: ['A', 'B'], slug: 'ab' } });
    expect(bothWrong.body.error.details.issues).toEqual([
      { field: 'name', issue: 'Invalid input: expected string, received array' },
      { field: 'slug', issue: 'a slug has at least 3 characters' },
    ]);
  });
});

describe('a body of very many unknown fields', () => {
  it('is answered with the first 100 issues and a count of the rest, not an issue for each', async () => {
    const body = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`unknown${i}`, 1]));
    const response = await call(app.url, '/api/auth/login', { body: { email: 'a@b.test', password: 'x', ...body } });
    expect(response.status).toBe(400);
    const issues = response.body.error.details.issues as Array<{ field: string; issue: string }>;
    expect(issues).toHaveLength(101);
    expect(issues[0]).toEqual({ field: 'unknown0', issue: 'is not a field that can be set here' });
    expect(issues.at(-1)).toEqual({ field: '(more)', issue: 'and 19900 more issues like these' });
    expect(response.text.length).toBeLessThan(20_000);
  });
});

