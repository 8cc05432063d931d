// Shared by rest-latency's servers: an express app listening on a free loopback port, and their pg pools.
import type { Server } from 'node:http';
import type { Express } from 'express';
import pg from 'pg';

export interface LoopbackServer {
  port: number;
  /** Stops listening, then releases what the app holds (`release`). */
  stop: () => Promise<void>;
}

export async function listenOnLoopback(app: Express, release: () => Promise<unknown>): Promise<LoopbackServer> {
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as { port: number }).port,
    stop: async () => {
      await new Promise((resolve) => server.close(resolve));
      await release();
    },
  };
}

/**
 * A pg pool for one of the servers. pg-pool's end() lets go of its clients before their sockets
 * close, and the embedded PostgreSQL stops right after: a client still closing then reports the
 * shutdown as an error, which must not end the run.
 */
export function benchPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('error', () => {});
  return pool;
}
