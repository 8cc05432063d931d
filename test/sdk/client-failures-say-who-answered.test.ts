import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpecwrightClient, errorCodeOf, serviceErrorOf, SpecwrightTransportError } from '../../sdk/index.ts';
import { call } from '../helpers/http.ts';
import { holdTableLock } from '../helpers/lock-holder.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { failureOf } from './failure-of.ts';

/**
 * A failed call tells its caller who answered and what to do: the service's answer with its code,
 * status, issues, request id and Retry-After; or, when the service gave none, that it could not be
 * reached or that something else (a proxy) answered, with that status — never a JSON parse error.
 */
let app: TestApp;
let proxy: Server;
let proxyUrl: string;
let releaseKeys: () => Promise<void>;
const GENERAL_LIMIT = 20;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: String(GENERAL_LIMIT), DATABASE_STATEMENT_TIMEOUT_MS: '1000' } });
  // The credential key ring locked past the statement bound: kitCredentials.publicKey answers 503.
  releaseKeys = await holdTableLock(app.database.ownerUrl, 'credential_keys');
  // What a reverse proxy answers when it refuses a call or cannot reach the service: HTML.
  proxy = createServer((req, res) => {
    const [status, title] = req.method === 'POST' ? [413, '413 Request Entity Too Large'] : [502, '502 Bad Gateway'];
    res.writeHead(status, { 'content-type': 'text/html' }).end(`<html><head><title>${title}</title></head><body><center><h1>${title}</h1></center></body></html>`);
  });
  await new Promise<void>((listening) => proxy.listen(0, '127.0.0.1', listening));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await releaseKeys?.();
  proxy?.close();
  await app?.stop();
});

describe('a call the service refused', () => {
  it('carries its code, status, field issues and request id, typed', async () => {
    // Each file's app has its own key budget: this key spends 2 of it.
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const invalid = serviceErrorOf(await failureOf(client.apiKeys.create.mutate({ name: '' })));
    expect(invalid).toMatchObject({ code: 'VALIDATION_ERROR', httpStatus: 400, path: 'apiKeys.create', issues: [{ field: 'name', issue: expect.any(String) }] });
    expect(invalid?.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(invalid?.retryAfterSeconds).toBeUndefined();
    const missing = serviceErrorOf(await failureOf(client.apiKeys.revoke.mutate({ keyId: '00000000-0000-4000-8000-000000000000' })));
    expect(missing).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404, issues: [] });
  });

  it('tells a 401 from a 503 (with when to retry) from a service that cannot be reached', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const unavailable = serviceErrorOf(await failureOf(client.kitCredentials.publicKey.query({ orgId: app.bootstrap.organizationId })));
    expect(unavailable).toMatchObject({ code: 'SERVICE_UNAVAILABLE', httpStatus: 503, retryAfterSeconds: 2 });

    const wrongKey = createSpecwrightClient({ url: app.url, apiKey: 'swk_nope_nope' });
    expect(serviceErrorOf(await failureOf(wrongKey.me.get.query()))).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });

    // A port nothing listens on any more.
    const closed = await new Promise<string>((found) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        server.close(() => found(url));
      });
    });
    const unreachable = await failureOf(createSpecwrightClient({ url: closed, apiKey: app.bootstrap.apiKey }).me.get.query());
    expect(serviceErrorOf(unreachable)).toBeUndefined();
    expect(errorCodeOf(unreachable)).toBeUndefined();
    expect(unreachable.message).toBe(`cannot reach ${closed} (ECONNREFUSED)`);
    expect(unreachable.cause).toBeInstanceOf(SpecwrightTransportError);
    expect((unreachable.cause as SpecwrightTransportError).status).toBeNull();
  });

  it("says how long a RATE_LIMITED caller should wait, from the answer's Retry-After", async () => {
    const created = await call(app.url, '/api/developer/api-keys', { apiKey: app.bootstrap.apiKey, body: { name: 'burnt' } });
    const client = createSpecwrightClient({ url: app.url, apiKey: created.body.data.key });
    // One batch of more calls than the budget holds is refused whole.
    const results = await Promise.allSettled(Array.from({ length: GENERAL_LIMIT + 1 }, () => client.me.get.query()));
    const refused = results.map((result) => (result.status === 'rejected' ? serviceErrorOf(result.reason) : undefined));
    expect(refused.every((failure) => failure?.code === 'RATE_LIMITED' && failure.httpStatus === 429)).toBe(true);
    expect(refused[0]?.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused[0]?.retryAfterSeconds).toBeLessThanOrEqual(60);
  });
});

describe('a call the service did not answer', () => {
  it("names a proxy's HTML error page and its status, for a query and for a mutation", async () => {
    const client = createSpecwrightClient({ url: proxyUrl, apiKey: app.bootstrap.apiKey });
    const badGateway = await failureOf(client.me.get.query());
    expect(badGateway.message).toBe(
      `${proxyUrl} answered HTTP 502 Bad Gateway with text/html, which is not the service's answer: a proxy in between refused or failed the call, or url is not the service's base URL (http(s)://host[:port], without /api or /trpc)`,
    );
    expect((badGateway.cause as SpecwrightTransportError).status).toBe(502);
    const tooLarge = await failureOf(client.projects.create.mutate({ name: 'through a proxy' }));
    expect(tooLarge.message).toMatch(new RegExp(`^${proxyUrl} answered HTTP 413 Payload Too Large with text/html, which is not the service's answer`));
    expect((tooLarge.cause as SpecwrightTransportError).status).toBe(413);
    expect(serviceErrorOf(tooLarge)).toBeUndefined();
  });

  it('says the url is not the base URL when it points at the REST surface', async () => {
    const client = createSpecwrightClient({ url: `${app.url}/api`, apiKey: app.bootstrap.apiKey });
    const failure = await failureOf(client.me.get.query());
    expect(failure.message).toMatch(/^http:\/\/127\.0\.0\.1:\d+ answered HTTP 404 Not Found with application\/json, which is not the service's answer: .* without \/api or \/trpc\)$/);
  });

  it('leaves an aborted call an abort', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const controller = new AbortController();
    const pending = failureOf(client.projects.list.query({}, { signal: controller.signal }));
    controller.abort();
    const aborted = await pending;
    expect((aborted.cause as Error).name).toBe('AbortError');
    expect(serviceErrorOf(aborted)).toBeUndefined();
  });

  it('ends a call at its own timeout though it went out in a batch beside others', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    // The key ring is locked: the service answers publicKey SERVICE_UNAVAILABLE only after its 1 s statement bound.
    const [timedOut, me] = await Promise.all([
      failureOf(client.kitCredentials.publicKey.query({ orgId: app.bootstrap.organizationId }, { signal: AbortSignal.timeout(100) })),
      client.me.get.query(),
    ]);
    expect(serviceErrorOf(timedOut)).toBeUndefined();
    // The signal's reason, as fetch gives it: a timeout is told from a cancel (AbortError, above).
    expect((timedOut.cause as Error).name).toBe('TimeoutError');
    expect(me.userId).toBe(app.bootstrap.userId);
  });

  it('refuses a url without http:// when the client is made, instead of every call failing "cannot reach null"', () => {
    expect(() => createSpecwrightClient({ url: 'localhost:3000' })).toThrow('url must start with http:// or https:// (expected http(s)://host[:port])');
  });
});
