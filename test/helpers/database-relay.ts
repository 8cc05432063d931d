import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export type DatabaseRelay = Awaited<ReturnType<typeof startDatabaseRelay>>;

/**
 * Made afresh for each connection, so it can remember what that connection sent before; given each
 * chunk the connection sends (as latin1 text: SQL reads plainly, the protocol's framing does not),
 * it says whether the database's answer to it is the one to lose.
 */
export type ConnectionWatch = () => (sent: string) => boolean;

/**
 * A TCP relay to PostgreSQL, so a test sees and steers the service's traffic from outside, without
 * touching the shared database. It counts the bytes the database sends back (how much a request
 * made the service read, as an operator's network graph would show it), and it can fail the ways a
 * network and a database fail:
 * - freeze: a database that accepts bytes and never answers, as one does when its host hangs
 *   (SIGSTOP, a frozen VM) or a path drops its packets. Connections it holds while frozen stay open
 *   and silent;
 * - cut: connections in use break and new ones are refused, as in a failover or a network blip,
 *   until it is restored;
 * - lose one answer: the database does what it was asked, and the connection drops before the
 *   service hears so.
 */
export async function startDatabaseRelay(target: URL) {
  const sockets = new Set<Socket>();
  let bytesFromDatabase = 0;
  let frozen = false;
  let onStalledQuery: () => void = () => {};
  let stalledQuery = new Promise<void>((resolve) => (onStalledQuery = resolve));
  let answerToLose: { watch: ConnectionWatch; on?: Socket; lost: boolean } | undefined;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    let watching: ((sent: string) => boolean) | undefined;
    client.on('data', (chunk: Buffer) => {
      if (frozen) return onStalledQuery();
      if (answerToLose && !answerToLose.on && (watching ??= answerToLose.watch())(chunk.toString('latin1'))) answerToLose.on = client;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      bytesFromDatabase += chunk.length;
      if (answerToLose?.on === client) {
        answerToLose.lost = true;
        client.destroy();
      } else if (!frozen) client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const cut = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
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
    /** Drops every connection and refuses new ones until `restore()`: to the service, the database is away. */
    cut,
    /** Accepts connections again, on the same port, so the service's URL still leads here: the database is back. */
    restore: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    /**
     * Once: the first connection whose watch says so is dropped as soon as the database answers,
     * instead of that answer being passed on. What was sent was done, but the service sees an error.
     */
    loseOneAnswer(watch: ConnectionWatch) {
      if (answerToLose) throw new Error('this relay has already been told which answer to lose');
      answerToLose = { watch, lost: false };
    },
    /** Whether the answer `loseOneAnswer` picked has been lost. */
    get answerLost() {
      return answerToLose?.lost ?? false;
    },
    /** Cuts for good (a `cut()` never restored): to the service, the database is gone. */
    close: () => void cut(),
  };
}
