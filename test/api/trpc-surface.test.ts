import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ApiResponse } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** /trpc answers like /api does: catalog statuses, a request id on every error, JSON without ceremony. */
let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
});
afterAll(() => app?.stop());

const input = (value: unknown) => encodeURIComponent(JSON.stringify(value));

describe('errors raised before a procedure runs', () => {
  it.each([
    ['a GET of a mutation', 'GET', '/trpc/projects.create', 404, 'NOT_FOUND'],
    ['a POST of a query', 'POST', '/trpc/me.get', 404, 'NOT_FOUND'],
    ['malformed input', 'GET', '/trpc/projects.list?input=%7Bnot-json', 400, 'VALIDATION_ERROR'],
    ['a query and a mutation in one batch', 'GET', `/trpc/me.get,projects.create?batch=1&input=${input({})}`, 400, 'VALIDATION_ERROR'],
    ['a batch larger than 50 calls', 'GET', `/trpc/${Array(51).fill('me.get').join(',')}?batch=1&input=${input({})}`, 400, 'VALIDATION_ERROR'],
    // The adapter reads the procedure from the last segment only: these named me.get.
    ['a procedure under a further path', 'GET', '/trpc/trpc/me.get', 404, 'NOT_FOUND'],
    ['a procedure under a further path, batched', 'GET', `/trpc/anything/me.get?batch=1&input=${input({})}`, 404, 'NOT_FOUND'],
  ])('%s answers its catalog status, with the request id', async (_case, method, path, status, code) => {
    const response = await call(app.url, path, { method, apiKey: key, ...(method === 'POST' ? { body: {} } : {}) });
    expect(response.status, response.text).toBe(status);
    const error = Array.isArray(response.body) ? response.body[0].error : response.body.error;
    expect(error.data).toMatchObject({ code, httpStatus: status, requestId: response.headers.get('x-request-id') });
  });

  it("carry tRPC's own JSON-RPC code for their status and the procedure's path, as a procedure's errors do", async () => {
    const cases: Array<[string, Promise<ApiResponse>, number, keyof typeof TRPC_ERROR_CODES_BY_KEY]> = [
      // Refused by the service's middleware, before tRPC reads the body.
      ['kits.publish', call(app.url, '/trpc/kits.publish', { body: {} }), 401, 'UNAUTHORIZED'],
      ['projects.create', call(app.url, '/trpc/projects.create', { apiKey: key, body: { name: 'x'.repeat(1_100_000) } }), 413, 'PAYLOAD_TOO_LARGE'],
      ['projects.create', call(app.url, '/trpc/projects.create', { apiKey: key, rawBody: '{"name":"typed as text"}', headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
      // Refused by tRPC itself (METHOD_NOT_SUPPORTED), answered as the catalog's NOT_FOUND.
      ['projects.create', call(app.url, '/trpc/projects.create', { apiKey: key }), 404, 'NOT_FOUND'],
      // Refused by the procedure: the shape the middleware's errors must match.
      ['me.get', call(app.url, '/trpc/me.get'), 401, 'UNAUTHORIZED'],
    ];
    for (const [path, answer, status, trpcCode] of cases) {
      const response = await answer;
      expect([path, response.status]).toEqual([path, status]);
      expect(response.body.error).toMatchObject({ code: TRPC_ERROR_CODES_BY_KEY[trpcCode], data: { httpStatus: status, path } });
    }
  });

  it('a body of another media type is refused with the message /api gives', async () => {
    const options = { apiKey: key, rawBody: '{"name":"typed as text"}', headers: { 'content-type': 'text/plain' } };
    const [trpc, rest] = [await call(app.url, '/trpc/projects.create', options), await call(app.url, '/api/projects', options)];
    expect([trpc.status, rest.status]).toEqual([415, 415]);
    expect(trpc.body.error.message).toBe('Content-Type "text/plain" is not supported: send application/json');
    expect(trpc.body.error.message).toBe(rest.body.error.message);
    // A body within the limit is read and dropped, so a client still sending it gets the answer;
    // a larger one is not waited for.
    expect([trpc.headers.get('connection'), rest.headers.get('connection')]).toEqual(['keep-alive', 'keep-alive']);
    const large = await call(app.url, '/trpc/projects.create', { ...options, rawBody: 'x'.repeat(2 * 1024 * 1024) });
    expect([large.status, large.headers.get('connection')]).toEqual([415, 'close']);
  });

  it('a batch of 50 calls is served', async () => {
    const response = await call(app.url, `/trpc/${Array(50).fill('me.get').join(',')}?batch=1&input=${input({})}`, { apiKey: key });
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(50);
  });
});

describe('calls whose every field is optional', () => {
  it('need no input at all, as their REST routes need no query', async () => {
    for (const path of ['/trpc/projects.list', '/trpc/organizations.list']) {
      const response = await call(app.url, path, { apiKey: key });
      expect(response.status, `${path}: ${response.text}`).toBe(200);
      expect(response.body.result.data).toMatchObject({ total: expect.any(Number), limit: 50, offset: 0 });
    }
  });
});

describe('a JSON body without a Content-Type', () => {
  it('is read as JSON, as tRPC clients send it', async () => {
    // Bytes, so that fetch adds no Content-Type of its own.
    const response = await fetch(`${app.url}/trpc/projects.create`, { method: 'POST', headers: { 'x-api-key': key }, body: new TextEncoder().encode(JSON.stringify({ name: 'Untyped' })) });
    const body = (await response.json()) as { result?: { data: { name: string } } };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.result?.data.name).toBe('Untyped');
  });
});

describe('a path that is not valid URL encoding', () => {
  it('answers VALIDATION_ERROR in JSON with the request id, as /api does', async () => {
    for (const path of ['/trpc/%E0%A4%A', '/trpc/me.get,%E0%A4%A?batch=1']) {
      const [trpc, rest] = [await call(app.url, path, { apiKey: key }), await call(app.url, '/api/organizations/%E0%A4%A', { apiKey: key })];
      expect([path, trpc.status, trpc.headers.get('content-type')?.split(';')[0]]).toEqual([path, 400, 'application/json']);
      expect(trpc.body.error).toMatchObject({ code: TRPC_ERROR_CODES_BY_KEY.BAD_REQUEST, message: rest.body.error.message, data: { code: 'VALIDATION_ERROR', httpStatus: 400, requestId: trpc.headers.get('x-request-id') } });
    }
  });
});

describe('a method other than GET and POST', () => {
  it.each(['PUT', 'PATCH', 'DELETE', 'OPTIONS'])('%s answers NOT_FOUND in JSON (no 405: a procedure is not an /api path), with or without a JSON body', async (method) => {
    for (const path of ['/trpc/projects.list', '/trpc/projects.create', '/trpc/no.such.procedure']) {
      for (const options of [{}, { rawBody: '{}', headers: { 'content-type': 'application/json' } }]) {
        const response = await call(app.url, path, { method, apiKey: key, ...options });
        const outcome = [method, path, response.status, response.headers.get('content-type')?.split(';')[0], response.body?.error?.data?.code];
        expect(outcome).toEqual([method, path, 404, 'application/json', 'NOT_FOUND']);
        expect(response.body.error).toMatchObject({ code: TRPC_ERROR_CODES_BY_KEY.NOT_FOUND, data: { httpStatus: 404, requestId: response.headers.get('x-request-id') } });
      }
    }
  });

  it('HEAD answers what GET would, without the body', async () => {
    for (const path of ['/trpc/projects.list', '/trpc/projects.create', '/trpc/no.such.procedure', `/trpc/projects.list?input=${input({ limit: 0 })}`]) {
      const [get, head] = [await call(app.url, path, { apiKey: key }), await call(app.url, path, { method: 'HEAD', apiKey: key })];
      expect([path, head.status, head.headers.get('content-type'), head.text]).toEqual([path, get.status, get.headers.get('content-type'), '']);
    }
    const requestId = `trpc-head-${crypto.randomUUID()}`;
    await call(app.url, '/trpc/me.get', { method: 'HEAD', apiKey: key, headers: { 'x-request-id': requestId } });
    const logged = app.logLines.filter((line) => line.requestId === requestId && line.req);
    expect(logged.map((line) => (line.req as { method: string }).method)).toEqual(['HEAD']);
  });
});

describe('a body of a JSON-like media type other than application/json', () => {
  it.each(['application/vnd.api+json', 'application/json-patch+json', 'application/merge-patch+json'])('%s is refused as on /api, in JSON, creating nothing', async (type) => {
    const name = `Typed as ${type}`;
    const options = { apiKey: key, rawBody: JSON.stringify({ name }), headers: { 'content-type': type } };
    const [trpc, rest] = [await call(app.url, '/trpc/projects.create', options), await call(app.url, '/api/projects', options)];
    expect([trpc.status, trpc.headers.get('content-type')?.split(';')[0], trpc.body?.error?.data?.code]).toEqual([415, 'application/json', 'UNSUPPORTED_MEDIA_TYPE']);
    expect(trpc.body.error.message).toBe(rest.body.error.message);
    expect(trpc.body.error.data.path).toBe('projects.create');
    expect(await ownerQuery(app.database.ownerUrl, 'select id from projects where name = $1', [name])).toEqual([]);
  });

  it('application/json in any letter case and with parameters is still read', async () => {
    for (const type of ['Application/JSON', 'application/json ; charset=utf-8']) {
      const response = await call(app.url, '/trpc/projects.create', { apiKey: key, rawBody: JSON.stringify({ name: `Typed ${type}` }), headers: { 'content-type': type } });
      expect([type, response.status, response.body?.result?.data?.name]).toEqual([type, 200, `Typed ${type}`]);
    }
  });
});
