import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await startTestApp();
  key = app.bootstrap.apiKey;
});
afterAll(() => app?.stop());

const keyCount = () => countRows(app.database.ownerUrl, 'api_keys');

describe('the /api envelope', () => {
  it('wraps success in {success, data, metadata {timestamp, requestId}}', async () => {
    const response = await call(app.url, '/api/me', { apiKey: key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      data: expect.objectContaining({ userId: app.bootstrap.userId, tenantId: app.bootstrap.tenantId, isPlatformAdmin: true }),
      metadata: { timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), requestId: response.headers.get('x-request-id') },
    });
  });

  it('answers a create with 201', async () => {
    const response = await call(app.url, '/api/developer/api-keys', { apiKey: key, body: { name: 'ci' } });
    expect(response.status).toBe(201);
    expect(response.body.data.key).toMatch(/^swk_[a-z0-9]{12}_/);
  });

  it('answers an unknown route with NOT_FOUND in the envelope', async () => {
    const response = await call(app.url, '/api/no/such/route', { apiKey: key });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' }, metadata: { requestId: expect.any(String) } });
  });

  it('quotes the start of a long path it has no route for, not all of it', async () => {
    const long = `x${'y'.repeat(15_000)}`;
    for (const path of [`/api/${long}`, `/trpc/a/${long}`, `/${long}`]) {
      const response = await call(app.url, path, { apiKey: key });
      expect(response.status, path.slice(0, 10)).toBe(404);
      const [method, quoted] = /^No route for (\S+) (.*)$/.exec(response.body.error.message)!.slice(1);
      expect(method).toBe('GET');
      expect(quoted).toBe(`${path.slice(0, 200)}…`);
    }
  });

  it('quotes the start of a long procedure path tRPC has no procedure for, in its message and data.path alike', async () => {
    const long = `x${'y'.repeat(15_000)}`;
    // A procedure name tRPC itself looks up (alone and batched), and a path the service refuses before it.
    for (const [path, named] of [[`/trpc/${long}`, long], [`/trpc/me.get,${long}?batch=1&input=%7B%7D`, long], [`/trpc/a/${long}`, `a/${long}`]] as const) {
      const response = await call(app.url, path, { apiKey: key });
      const error = Array.isArray(response.body) ? response.body[1].error : response.body.error;
      expect([path.slice(0, 12), error.data.code, error.data.path]).toEqual([path.slice(0, 12), 'NOT_FOUND', `${named.slice(0, 200)}…`]);
      expect(error.message).toMatch(named === long ? new RegExp(`^No procedure found on path "${long.slice(0, 200)}…"$`) : /^No route for GET \/trpc\/a\/xy+…$/);
      expect(response.text.length, path.slice(0, 12)).toBeLessThan(1_500);
    }
  });

  it('names the field of an invalid uuid', async () => {
    const response = await call(app.url, '/api/developer/api-keys/not-a-uuid', { method: 'DELETE', apiKey: key });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('VALIDATION_ERROR');
    expect(response.body.error.details.issues).toEqual([{ field: 'keyId', issue: expect.stringMatching(/uuid/i) }]);
  });

  it('names the field of an invalid body and writes nothing', async () => {
    const before = await keyCount();
    const response = await call(app.url, '/api/developer/api-keys', { apiKey: key, body: { name: '' } });
    expect(response.status).toBe(400);
    expect(response.body.error.details.issues[0].field).toBe('name');
    expect(await keyCount()).toBe(before);
  });

  it('rejects malformed JSON with VALIDATION_ERROR', async () => {
    const response = await call(app.url, '/api/developer/api-keys', { apiKey: key, rawBody: '{"name":', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
  });

  it('answers a body over the limit with 413 in the envelope', async () => {
    const before = await keyCount();
    const response = await call(app.url, '/api/developer/api-keys', { apiKey: key, body: { name: 'x'.repeat(1024 * 1024 + 10) } });
    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({ success: false, error: { code: 'PAYLOAD_TOO_LARGE' } });
    expect(await keyCount()).toBe(before);
  });

  it('turns an unexpected exception into INTERNAL_ERROR that reveals nothing, logged with the request id', async () => {
    await ownerQuery(app.database.ownerUrl, 'revoke select on api_keys from specwright_app');
    try {
      const response = await call(app.url, '/api/developer/api-keys', { apiKey: key, headers: { 'x-request-id': 'boom-1' } });
      expect(response.status).toBe(500);
      expect(response.body.error.code).toBe('INTERNAL_ERROR');
      expect(response.text).not.toMatch(/permission|api_keys|select|stack|at /i);
      expect(response.body.metadata.requestId).toBe('boom-1');
      const logged = app.logLines.find((line) => line.requestId === 'boom-1' && line.msg === 'unexpected error');
      expect(logged?.err).toMatchObject({ message: expect.stringMatching(/permission denied/) });
    } finally {
      await ownerQuery(app.database.ownerUrl, 'grant select on api_keys to specwright_app');
    }
  });

  it("answers a stored row its answer cannot describe as the service's INTERNAL_ERROR, not the caller's VALIDATION_ERROR", async () => {
    const created = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Stored askew' } });
    expect(created.status).toBe(201);
    const projectId: string = created.body.data.id;
    // No route writes these; a bad migration or a hand edit could.
    await ownerQuery(app.database.ownerUrl, `update projects set ontology_coverage = 'NaN', selected_features = '{"a": 1}' where id = $1`, [projectId]);
    const response = await call(app.url, `/api/projects/${projectId}`, { apiKey: key, headers: { 'x-request-id': 'askew-1' } });
    expect(response.status).toBe(500);
    expect(response.body.error).toEqual({ code: 'INTERNAL_ERROR', message: expect.stringMatching(/request id/) });
    expect(app.logLines.some((line) => line.requestId === 'askew-1' && line.msg === 'unexpected error')).toBe(true);
  });
});

describe('caching', () => {
  it('no answer may be stored by a cache: not a shown-once secret, not an error, on either surface', async () => {
    const answers = [
      await call(app.url, '/api/developer/api-keys', { apiKey: key, body: { name: 'shown once' } }),
      await call(app.url, '/trpc/apiKeys.create', { apiKey: key, body: { name: 'shown once too' } }),
      await call(app.url, '/api/me', { apiKey: key }),
      await call(app.url, '/api/auth/login', { body: { email: 'nobody@example.com', password: 'not the password' } }),
      await call(app.url, '/api/no-such-route', { apiKey: key }),
      await call(app.url, '/trpc/me.get', { apiKey: 'swk_wrong' }),
    ];
    expect(answers.map((answer) => [answer.status, answer.headers.get('cache-control')])).toEqual([
      [201, 'no-store'],
      [200, 'no-store'],
      [200, 'no-store'],
      [401, 'no-store'],
      [404, 'no-store'],
      [401, 'no-store'],
    ]);
  });
});

describe('X-Request-ID', () => {
  it('is honoured when sane, echoed as a header and in metadata, and on every log line of the request', async () => {
    const response = await call(app.url, '/api/me', { apiKey: key, headers: { 'x-request-id': 'trace-abc.123' } });
    expect(response.headers.get('x-request-id')).toBe('trace-abc.123');
    expect(response.body.metadata.requestId).toBe('trace-abc.123');
    const lines = app.logLines.filter((line) => line.requestId === 'trace-abc.123');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((line) => line.msg === 'request completed')).toBe(true);
  });

  it('is replaced by a generated id when too long or unsafe', async () => {
    for (const sent of ['x'.repeat(129), 'bad id with spaces', '<script>']) {
      const response = await call(app.url, '/api/health', { headers: { 'x-request-id': sent } });
      const echoed = response.headers.get('x-request-id');
      expect(echoed).not.toBe(sent);
      expect(echoed).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.body.metadata.requestId).toBe(echoed);
    }
  });

  it('is generated when absent, also on errors', async () => {
    const response = await call(app.url, '/api/me');
    expect(response.status).toBe(401);
    expect(response.body.metadata.requestId).toBe(response.headers.get('x-request-id'));
  });
});
