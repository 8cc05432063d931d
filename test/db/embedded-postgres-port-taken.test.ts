import { existsSync } from 'node:fs';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startEmbeddedPostgres } from '../../control-plane/db/embedded-postgres.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * The ports `findFreePort` answers next in this file, in place of the free one it found: each is
 * held open by the test, as another process would have taken it in the moment since it was free.
 * (`node:net` mocked for this file's modules only: the service has no way to be handed a port.)
 */
const portChooser = vi.hoisted(() => ({ nextAnswers: [] as number[], answered: 0 }));

vi.mock('node:net', async (importOriginal) => {
  const net = await importOriginal<typeof import('node:net')>();
  const createServerAnsweringTaken = ((...args: Parameters<typeof net.createServer>) => {
    const server = net.createServer(...args);
    const boundAddress = server.address.bind(server);
    server.address = () => {
      const bound = boundAddress();
      if (bound === null || typeof bound === 'string') return bound;
      portChooser.answered += 1;
      const taken = portChooser.nextAnswers.shift();
      return taken === undefined ? bound : { ...bound, port: taken };
    };
    return server;
  }) as typeof net.createServer;
  return { ...net, createServer: createServerAnsweringTaken, default: { ...net, createServer: createServerAnsweringTaken } };
});

const holders: Server[] = [];
afterEach(async () => {
  portChooser.nextAnswers = [];
  await Promise.all(holders.splice(0).map((holder) => new Promise((closed) => holder.close(closed))));
});

/** A loopback port held open (on 127.0.0.1, where the embedded cluster listens) until the test ends. */
async function holdPort(): Promise<number> {
  const holder = createServer();
  holders.push(holder);
  await new Promise<void>((listening) => holder.listen(0, '127.0.0.1', listening));
  const port = (holder.address() as { port: number }).port;
  portChooser.answered = 0;
  return port;
}

describe('the embedded cluster when the free port it chose is taken before PostgreSQL binds it (time of check to time of use)', () => {
  it('starts on another free port, and serves there', async () => {
    const dataDir = await scratchDir('port-taken');
    const taken = await holdPort();
    portChooser.nextAnswers = [taken];

    const cluster = await startEmbeddedPostgres(dataDir);
    try {
      expect(cluster.port).not.toBe(taken);
      expect(portChooser.answered).toBe(2);
      const client = new pg.Client({ connectionString: cluster.ownerUrl });
      await client.connect();
      try {
        expect((await client.query('select current_database() as name, current_setting($1) as port', ['port'])).rows).toEqual([{ name: 'specwright', port: String(cluster.port) }]);
      } finally {
        await client.end();
      }
    } finally {
      await cluster.stop();
    }
  }, 60_000);

  it('gives up after a bounded number of ports, each taken, saying so, and gives its claim back', async () => {
    const dataDir = await scratchDir('port-taken-always');
    const taken = await holdPort();
    portChooser.nextAnswers = [taken, taken, taken, taken, taken, taken];

    await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(
      new RegExp(`did not start: each of 5 free loopback ports was taken by another process before it could listen; the last time it said: .*Address already in use.*port ${taken}`),
    );
    expect(portChooser.answered).toBe(5);
    expect(existsSync(join(dataDir, 'postgres.owner'))).toBe(false);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 60_000);

  it('names the taken port whatever PostgreSQL logs after it (log_min_messages raised to debug a start)', async () => {
    const dataDir = await scratchDir('port-taken-debug-log');
    await (await startEmbeddedPostgres(dataDir)).stop();
    // Its exit then logs a dozen DEBUG lines after the FATAL: the last five say nothing of the port.
    await appendFile(join(dataDir, 'postgres', 'postgresql.conf'), '\nlog_min_messages = debug3\n');
    const taken = await holdPort();
    portChooser.nextAnswers = [taken, taken, taken, taken, taken];

    await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(
      new RegExp(`each of 5 free loopback ports was taken .*could not bind IPv4 address "127\\.0\\.0\\.1": Address already in use.*port ${taken}.*FATAL: +could not create any TCP/IP sockets`),
    );
    expect(portChooser.answered).toBe(5);
    expect(existsSync(join(dataDir, 'postgres.owner'))).toBe(false);
  }, 60_000);

  it('tries no other port when PostgreSQL fails for another reason', async () => {
    const dataDir = await scratchDir('port-taken-not-why');
    // A cluster directory PostgreSQL refuses (no global/pg_control): the port is not why.
    await mkdir(join(dataDir, 'postgres', 'base'), { recursive: true });
    await writeFile(join(dataDir, 'postgres', 'PG_VERSION'), '18\n');
    portChooser.answered = 0;

    await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(/did not start: (?!each of).*not a whole cluster/);
    expect(portChooser.answered).toBe(1);
  }, 30_000);
});
