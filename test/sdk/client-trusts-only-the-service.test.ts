import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpecwrightClient, serviceErrorOf, SpecwrightTransportError } from '../../sdk/index.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { failureOf } from './failure-of.ts';

/**
 * Only the service's own answers are read as the service's, and the client's credentials go only
 * to the url it was given: not on along a redirect, not mistaken for a gateway's JSON error.
 */
let app: TestApp;
const servers: Server[] = [];

async function listen(handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void, host = '127.0.0.1'): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  for (const server of servers) server.close();
  await app?.stop();
});

describe('a redirect', () => {
  it('is not followed to another origin: the API key stays home and the caller is told where it pointed', async () => {
    const reached: IncomingHttpHeaders[] = [];
    // Another origin (localhost, not 127.0.0.1) that would answer as the service does.
    const elsewhere = await listen((req, res) => {
      reached.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result: { data: {} } }));
    }, 'localhost');
    const redirecting = await listen((req, res) => void res.writeHead(307, { location: `${elsewhere}${req.url}` }).end());
    const client = createSpecwrightClient({ url: redirecting, apiKey: 'swk_prefix_the-secret-part' });
    for (const failed of [await failureOf(client.me.get.query()), await failureOf(client.apiKeys.create.mutate({ name: 'ci' }))]) {
      expect(failed.message).toBe(
        `${redirecting} answered HTTP 307 Temporary Redirect, a redirect to ${elsewhere}, which the client does not follow (it would take the credentials along); pass the service's own base URL as url`,
      );
      expect((failed.cause as SpecwrightTransportError).status).toBe(307);
      expect(serviceErrorOf(failed)).toBeUndefined();
    }
    expect(reached).toEqual([]);
  });

  it("names only the origin it points to, not the path and query (a query's input)", async () => {
    const redirecting = await listen((req, res) => void res.writeHead(302, { location: `https://example.test${req.url}` }).end());
    const client = createSpecwrightClient({ url: redirecting });
    const failed = await failureOf(client.customerInvitations.get.query({ token: 'tok3n-of-an-invitation-0123456789' }));
    expect(failed.message).toMatch(/^http:\/\/127\.0\.0\.1:\d+ answered HTTP 302 Found, a redirect to https:\/\/example\.test, which the client does not follow/);
  });
});

describe("a gateway's JSON error in tRPC's shape", () => {
  it('is a transport failure with its status and Retry-After, not an answer of the service', async () => {
    // Google's front ends (and others) answer {"error": {"code": <status>, "message": …}}.
    const gateway = await listen((_req, res) =>
      void res
        .writeHead(503, { 'content-type': 'application/json', 'retry-after': '30' })
        .end(JSON.stringify({ error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' } })),
    );
    const failed = await failureOf(createSpecwrightClient({ url: gateway }).me.get.query());
    expect(failed.cause).toBeInstanceOf(SpecwrightTransportError);
    expect(failed.cause).toMatchObject({ status: 503, retryAfterSeconds: 30 });
    expect(failed.message).toMatch(/^http:\/\/127\.0\.0\.1:\d+ answered HTTP 503 Service Unavailable with application\/json \(Retry-After: 30 s\), which is not the service's answer/);
  });
});

describe('a url ending in /trpc', () => {
  it('is refused when the client is made, instead of every call answering NOT_FOUND as if the record were missing', () => {
    for (const url of [`${app.url}/trpc`, `${app.url}/trpc/`]) {
      expect(() => createSpecwrightClient({ url, apiKey: app.bootstrap.apiKey })).toThrow("url ends in /trpc; pass the service's base URL (expected http(s)://host[:port], without /trpc)");
    }
  });

  it('the base URL still works, with or without a trailing slash', async () => {
    for (const url of [app.url, `${app.url}/`]) {
      const me = await createSpecwrightClient({ url, apiKey: app.bootstrap.apiKey }).me.get.query();
      expect(me.userId).toBe(app.bootstrap.userId);
    }
  });
});
