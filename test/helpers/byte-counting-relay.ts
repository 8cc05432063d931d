import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP relay to PostgreSQL that counts the bytes the database sends back: how much a request
 * made the service read from it, seen from outside, as an operator's network graph would show it.
 */
export async function startByteCountingRelay(target: URL) {
  const sockets = new Set<Socket>();
  let bytesFromDatabase = 0;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => (bytesFromDatabase += chunk.length));
    upstream.pipe(client);
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
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}
