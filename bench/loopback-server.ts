// Shared by rest-latency's servers: an express app listening on a free loopback port.
import type { Server } from 'node:http';
import type { Express } from 'express';

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
