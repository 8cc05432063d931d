import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One request with the headers as given: fetch will not send an Expect header of its own choosing. */
const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
  new Promise<RawAnswer>((resolve, reject) => {
    const outgoing = request(new URL(path, app.url), { method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text ? JSON.parse(text) : undefined }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });

const MESSAGE = 'The only expectation this service meets is Expect: 100-continue; send the request without this Expect header';

describe('a request whose Expect header names something other than 100-continue', () => {
  it('answers 417 EXPECTATION_FAILED in the envelope on /api, with the request id, and runs nothing', async () => {
    const projectsBefore = await countRows(app.database.ownerUrl, 'projects');
    const body = JSON.stringify({ name: 'Never made', organizationId: app.bootstrap.organizationId });
    const answer = await send('POST', '/api/projects', { expect: 'x-tell-me-first', 'x-api-key': app.bootstrap.apiKey, 'content-type': 'application/json' }, body);
    expect(answer.status).toBe(417);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-store');
    // The security headers every other answer carries.
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(answer.body).toEqual({
      success: false,
      error: { code: 'EXPECTATION_FAILED', message: MESSAGE },
      metadata: { timestamp: expect.any(String), requestId: answer.headers['x-request-id'] },
    });
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(projectsBefore);
  });

  it('echoes the X-Request-ID the caller sent, and the log line says so', async () => {
    const answer = await send('GET', '/api/health', { expect: 'something-else', 'x-request-id': 'caller-chosen-id.1' });
    expect([answer.status, answer.headers['x-request-id'], answer.body.metadata.requestId]).toEqual([417, 'caller-chosen-id.1', 'caller-chosen-id.1']);
    expect(app.logLines.filter((line) => line.requestId === 'caller-chosen-id.1').map((line) => line.msg)).toEqual(['request with an unmet expectation refused']);
  });

  it('answers in tRPC\'s error shape on /trpc, with the catalog code and status', async () => {
    const answer = await send('GET', '/trpc/me.get', { expect: 'x-tell-me-first', 'x-api-key': app.bootstrap.apiKey });
    expect(answer.status).toBe(417);
    expect(answer.body.error).toMatchObject({
      message: MESSAGE,
      // JSON-RPC's code for a request the caller must change (BAD_REQUEST), not INTERNAL_SERVER_ERROR's.
      code: -32600,
      data: { code: 'EXPECTATION_FAILED', httpStatus: 417, path: 'me.get', requestId: answer.headers['x-request-id'] },
    });
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('does not wait for a body over the limit it would not read: it answers at once and closes the connection', async () => {
    const answer = await new Promise<RawAnswer>((resolve, reject) => {
      const headers = { expect: 'x-tell-me-first', 'content-type': 'application/json', 'content-length': String(2 * 1024 * 1024) };
      const outgoing = request(new URL('/api/projects', app.url), { method: 'POST', headers }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: undefined }));
      });
      outgoing.on('error', reject);
      // The body is never sent.
      outgoing.flushHeaders();
    });
    expect([answer.status, answer.headers.connection]).toEqual([417, 'close']);
  });

  it('still meets Expect: 100-continue', async () => {
    const answer = await send('GET', '/api/health', { expect: '100-continue' });
    expect(answer.status).toBe(200);
  });
});
