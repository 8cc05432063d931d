import { createServer, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpecwrightClient, serviceErrorOf, SpecwrightTransportError } from '../../sdk/index.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { failureOf } from './failure-of.ts';

/**
 * A refusal that says when to try again is read the same whoever sent it: a proxy in front of the
 * service (its own 429 or 503 page) or the service itself (RATE_LIMITED, in its error shape).
 */
let app: TestApp;
let proxy: Server;
let proxyUrl: string;
let answer: { status: number; headers: OutgoingHttpHeaders; body: string };

const GENERAL_LIMIT = 3;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: String(GENERAL_LIMIT), LOGIN_FAILURES_PER_EMAIL_AND_ADDRESS: '1' } });
  proxy = createServer((_req, res) => void res.writeHead(answer.status, answer.headers).end(answer.body));
  await new Promise<void>((listening) => proxy.listen(0, '127.0.0.1', listening));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  proxy?.close();
  await app?.stop();
});

/** What a proxy's refusal with this Retry-After (none when undefined) gives the caller of a query. */
async function proxyRefusal(status: number, retryAfter: string | undefined): Promise<SpecwrightTransportError> {
  const headers: OutgoingHttpHeaders = { 'content-type': 'text/html' };
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
  answer = { status, headers, body: `<html><body><h1>${status}</h1></body></html>` };
  const failure = await failureOf(createSpecwrightClient({ url: proxyUrl, apiKey: 'swk_x_y' }).me.get.query());
  expect(serviceErrorOf(failure)).toBeUndefined();
  expect(failure.cause).toBeInstanceOf(SpecwrightTransportError);
  return failure.cause as SpecwrightTransportError;
}

describe("a proxy's refusal", () => {
  it('a 429 with Retry-After in seconds says how long to wait, in the field and in the message', async () => {
    const refused = await proxyRefusal(429, '120');
    expect(refused.status).toBe(429);
    expect(refused.retryAfterSeconds).toBe(120);
    expect(refused.message).toBe(
      `${proxyUrl} answered HTTP 429 Too Many Requests with text/html (Retry-After: 120 s), which is not the service's answer: a proxy in between refused or failed the call, or url is not the service's base URL (http(s)://host[:port], without /api or /trpc)`,
    );
  });

  it('a 503 with Retry-After as an HTTP date says how many seconds remain until then', async () => {
    const inAnHour = new Date(Date.now() + 3_600_000).toUTCString();
    const refused = await proxyRefusal(503, inAnHour);
    expect(refused.status).toBe(503);
    expect(refused.retryAfterSeconds).toBeGreaterThan(3_000);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(3_600);
    // A date already past: try again now.
    expect((await proxyRefusal(503, 'Sun, 06 Nov 1994 08:49:37 GMT')).retryAfterSeconds).toBe(0);
  });

  it('without a Retry-After, or with one that is neither seconds nor a date, has none (not "retry now")', async () => {
    expect((await proxyRefusal(503, undefined)).retryAfterSeconds).toBeUndefined();
    for (const garbage of ['-1', '1.5', 'a 1', 'soon', '120s', '99999999999999999999']) {
      const refused = await proxyRefusal(429, garbage);
      expect(refused.retryAfterSeconds, garbage).toBeUndefined();
      expect(refused.message, garbage).not.toContain('Retry-After');
    }
  });
});

describe("the service's own RATE_LIMITED", () => {
  it('says how long to wait for a call sent on its own (a mutation), as for a batch', async () => {
    const created = await call(app.url, '/api/developer/api-keys', { apiKey: app.bootstrap.apiKey, body: { name: 'spent' } });
    const client = createSpecwrightClient({ url: app.url, apiKey: created.body.data.key });
    for (let spent = 0; spent < GENERAL_LIMIT; spent++) await client.me.get.query();
    const refused = serviceErrorOf(await failureOf(client.apiKeys.create.mutate({ name: 'one too many' })));
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', httpStatus: 429, path: 'apiKeys.create' });
    expect(refused?.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it('says how long to wait after too many failed sign-ins', async () => {
    const client = createSpecwrightClient({ url: app.url });
    const login = { email: 'nobody-here@example.com', password: 'not the password' };
    expect(serviceErrorOf(await failureOf(client.auth.login.mutate(login)))?.code).toBe('UNAUTHORIZED');
    const refused = serviceErrorOf(await failureOf(client.auth.login.mutate(login)));
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', httpStatus: 429 });
    expect(refused?.retryAfterSeconds).toBeGreaterThan(0);
    expect(refused?.details?.retryAfterSeconds).toBe(refused?.retryAfterSeconds);
  });
});
