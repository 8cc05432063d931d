import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type DatabaseHandle } from '../../control-plane/db/kysely-client.ts';
import { checkHealth } from '../../control-plane/domains/health/health.service.ts';

/**
 * A database that accepts connections and never answers (paused, or behind a path that drops
 * packets): a server that holds every connection it is given. The health check must say the
 * database is down within its bound rather than wait with it.
 */
let silent: Server;
const held = new Set<Socket>();
let database: DatabaseHandle;
beforeAll(async () => {
  silent = createServer((socket) => {
    held.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as { port: number };
  database = createDatabase(`postgres://specwright_app:unused@127.0.0.1:${port}/specwright`, { max: 2, prepareStatements: true });
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await database?.pool.end().catch(() => {});
  await new Promise((resolve) => silent?.close(resolve));
});

describe('the health check, while the database hangs', () => {
  it('answers within its bound that the database is down', async () => {
    const report = await Promise.race([
      checkHealth(database.db, '1.0.0', 30_000, 300),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 3 s'), 3_000)),
    ]);
    expect(report).toMatchObject({ status: 'degraded', database: { status: 'down' }, worker: { status: 'down', lastHeartbeatAt: null } });
  });
});
