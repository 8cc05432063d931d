import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export type DatabaseRelay = Awaited<ReturnType<typeof startDatabaseRelay>>;

/**
 * A TCP relay to PostgreSQL, so a test sees and steers the service's traffic from outside, without
 * touching the shared database. It counts the bytes the database sends back (how much a request
 * made the service read, as an operator's network graph would show it), and it can stop relaying:
 * a database that accepts bytes and never answers, as one does when its host hangs (SIGSTOP, a
 * frozen VM) or a path drops its packets. Connections it holds while frozen stay open and silent.
 */
export async function startDatabaseRelay(target: URL) {
  const sockets = new Set<Socket>();
  let bytesFromDatabase = 0;
  let frozen = false;
  let onStalledQuery: () => void = () => {};
  let stalledQuery = new Promise<void>((resolve) => (onStalledQuery = resolve));
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (chunk: Buffer) => (frozen ? onStalledQuery() : upstream.write(chunk)));
    upstream.on('data', (chunk: Buffer) => {
      bytesFromDatabase += chunk.length;
      if (!frozen) client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    urlFor(url: string) {
      const relayed = new URL(url);
      relayed.host = `127.0.0.1:${port}`;
      return relayed.toString();
    },
    /** Bytes the database has sent through the relay so far. */
    get bytesFromDatabase() {
      return bytesFromDatabase;
    },
    freeze: () => (frozen = true),
    /** Relays again: connections frozen meanwhile stay wedged (what they sent was dropped); new ones work. */
    thaw() {
      frozen = false;
      stalledQuery = new Promise<void>((resolve) => (onStalledQuery = resolve));
    },
    /** Resolves once the service sent a query the frozen database will never answer. */
    get stalledQuery() {
      return stalledQuery;
    },
    /** Cuts every connection and refuses new ones: to the service, the database is gone for good. */
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}
