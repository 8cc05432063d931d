import { readFile } from 'node:fs/promises';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listeningUrl, startMainProcess, type MainProcess } from '../helpers/main-process.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { createTestDatabase } from '../helpers/test-database.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * A TCP relay to PostgreSQL that can stop relaying: a database that accepts bytes and never
 * answers, as one does when its host hangs (SIGSTOP, a frozen VM), without touching the shared one.
 */
async function startFreezableRelay(target: URL) {
  const sockets = new Set<Socket>();
  let frozen = false;
  let onStalledQuery: () => void = () => {};
  const stalledQuery = new Promise<void>((resolve) => (onStalledQuery = resolve));
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk) => (frozen ? onStalledQuery() : upstream.write(chunk)));
    upstream.on('data', (chunk) => frozen || client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    urlFor(url: string) {
      const relayed = new URL(url);
      relayed.host = `127.0.0.1:${port}`;
      return relayed.toString();
    },
    freeze: () => (frozen = true),
    /** Resolves once the service sent a query the frozen database will never answer. */
    stalledQuery,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

const running: MainProcess[] = [];
afterAll(() => running.forEach((main) => main.child.kill('SIGKILL')));

describe('SIGTERM while PostgreSQL does not answer', () => {
  it('ends the process soon after the grace period, saying what did not close', async () => {
    const database = await createTestDatabase();
    const relay = await startFreezableRelay(new URL(database.ownerUrl));
    try {
      const graceMs = 500;
      const dataDir = await scratchDir('frozen');
      const api = startMainProcess('api', {
        DATABASE_URL: relay.urlFor(database.ownerUrl),
        APP_DATABASE_URL: relay.urlFor(database.appUrl),
        SERVER_SECRET: TEST_SERVER_SECRET,
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        SHUTDOWN_GRACE_MS: String(graceMs),
      });
      running.push(api);
      const url = await listeningUrl(api);
      const apiKey: string = JSON.parse(await readFile(join(dataDir, 'bootstrap.json'), 'utf8')).apiKey;

      relay.freeze();
      const inFlight = fetch(`${url}/api/me`, { headers: { 'x-api-key': apiKey } }).then(
        (response) => response.status,
        () => 'cut',
      );
      await relay.stalledQuery;

      const signalledAt = Date.now();
      api.child.kill('SIGTERM');
      const code = await Promise.race([api.exit, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), graceMs + 15_000))]);
      const elapsed = Date.now() - signalledAt;
      expect(code, api.output()).toBe(1);
      // Grace, then a few seconds to close connections: bounded, not forever.
      expect(elapsed).toBeLessThan(graceMs + 10_000);
      expect(await inFlight).toBe('cut');
      const errorLines = api.output().split('\n').filter((line) => /"level":50/.test(line));
      expect(errorLines, api.output()).toHaveLength(1);
      expect(errorLines[0]).toMatch(/shutdown did not finish within [\d.]+ s; not closed: the API database connections \(\d+ of \d+ still in use\), the owner database connections/);
    } finally {
      relay.close();
    }
  }, 60_000);
});
