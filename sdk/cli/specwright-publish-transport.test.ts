/**
 * `kit publish` when the connection, not the service, decides: a server that gave up waiting for a
 * slow upload (408), and https that cannot work (a plain http port, an untrusted certificate). Each
 * says what happened, and the exit code says whether trying again can help (3) or not (1).
 */
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliInProcess as cli } from './test-support/cli-in-process.ts';
import { startKitPublishServer, type KitPublishServer } from './test-support/kit-publish-server.ts';
import { selfSignedCertificate, selfSignedKey } from './test-support/self-signed-localhost.ts';

let work: string;
let registry: KitPublishServer;
const servers: Server[] = [];
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'specwright-transport-'));
  registry = await startKitPublishServer();
});
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  await registry.close();
  await rm(work, { recursive: true, force: true });
});

async function newKit(name: string): Promise<string> {
  const dir = join(work, name);
  expect((await cli(['kit', 'init', dir])).code).toBe(0);
  return dir;
}

async function listening(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('a server that gave up waiting for the upload', () => {
  it('is a timeout to try again (exit code 3), not a --url that points elsewhere', async () => {
    const dir = await newKit('slow-upload');
    const manifest = JSON.parse(await readFile(join(dir, 'kit.json'), 'utf8'));
    manifest.discovery.pools = ['pools/a.txt', 'pools/b.txt'];
    await writeFile(join(dir, 'kit.json'), JSON.stringify(manifest, null, 2));
    await mkdir(join(dir, 'pools'));
    for (const pool of manifest.discovery.pools) await writeFile(join(dir, pool), 'x'.repeat(2_000_000));
    // It reads nothing, as over a slow link: Node answers its own bare 408 once requestTimeout passes,
    // as the service does past HTTP_REQUEST_TIMEOUT_MS.
    const port = await listening(createServer({ requestTimeout: 1_000, connectionsCheckingInterval: 100 }, () => {}));
    const flags = ['--url', `http://127.0.0.1:${port}`, '--api-key', 'swk_prefix_secret', '--org', '00000000-0000-4000-8000-000000000000'];
    const text = await cli(['kit', 'publish', dir, ...flags]);
    expect(text.code).toBe(3);
    expect(text.err.at(-1)).toMatch(
      /^specwright: publish failed: http:\/\/127\.0\.0\.1:\d+ answered HTTP 408 Request Timeout: the upload \([\d.]+ KiB\) did not arrive within the server's time limit; try again, on a faster connection \[TIMEOUT 408\]$/,
    );
    const json = await cli(['kit', 'publish', dir, ...flags, '--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.out[0] as string).error).toMatchObject({ code: 'TIMEOUT', status: 408 });
  });
});

describe('https that cannot work', () => {
  it('to a port that serves plain http says so, and is not "try again later" (exit code 1)', async () => {
    const dir = await newKit('https-to-http');
    const before = registry.received.length;
    const https = registry.url.replace('http://', 'https://');
    const result = await cli(['kit', 'publish', dir, '--url', https, '--api-key', registry.apiKey, '--org', registry.orgId]);
    expect(result.code).toBe(1);
    expect(result.err.at(-1)).toBe(
      `specwright: publish failed: cannot connect securely to ${https} (EPROTO): the server there does not answer https; check --url's scheme and port (the service itself may serve plain http); neither the API key nor the kit was sent [TLS]`,
    );
    expect(registry.received.length).toBe(before);
  });

  it('to a server whose certificate is not trusted says so, sends nothing, and is not "try again later" (exit code 1)', async () => {
    const dir = await newKit('untrusted-certificate');
    let requests = 0;
    const port = await listening(createHttpsServer({ cert: selfSignedCertificate, key: selfSignedKey }, (_req, res) => {
      requests += 1;
      res.writeHead(500).end();
    }));
    const result = await cli(['kit', 'publish', dir, '--url', `https://localhost:${port}`, '--api-key', 'swk_prefix_secret', '--org', '00000000-0000-4000-8000-000000000000', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.out[0] as string)).toEqual({ ok: false, error: { code: 'TLS', status: null, message: expect.any(String) }, problems: [] });
    // Node's own words follow (with its hint about a locally installed CA in recent versions).
    expect(JSON.parse(result.out[0] as string).error.message).toMatch(
      /^cannot connect securely to https:\/\/localhost:\d+ \(DEPTH_ZERO_SELF_SIGNED_CERT\): its certificate is not trusted: self-signed certificate\b.*; neither the API key nor the kit was sent$/,
    );
    expect(requests).toBe(0);
  });
});
