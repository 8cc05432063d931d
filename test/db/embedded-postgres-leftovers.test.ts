import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../control-plane/db/embedded-postgres.ts';
import { postgresOsUser } from '../../control-plane/db/initdb.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/** Above any pid the kernel hands out (pid_max is at most 2^22), so never a running process. */
const GONE_PID = 999_999_999;

/** A live process's start time (/proc/<pid>/stat field 22), as a claim records it. */
async function startTimeOf(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}


/** Starts the embedded cluster on `dataDir`, checks it serves the service's database, and stops it. */
async function expectStartsAndServes(dataDir: string): Promise<void> {
  const cluster = await startEmbeddedPostgres(dataDir);
  const client = new pg.Client({ connectionString: cluster.ownerUrl });
  await client.connect();
  try {
    expect((await client.query('select current_database() as name')).rows).toEqual([{ name: 'specwright' }]);
  } finally {
    await client.end();
    await cluster.stop();
  }
}
describe('the embedded cluster after an earlier start was killed', () => {
  // The pid in each claim is alive (the test runner), but not the process that wrote the claim.
  it.each([
    ['a claim whose process is gone and whose pid now belongs to another one', () => `${process.ppid} 1`],
    ['a bare-pid claim an earlier version left (it never gave one back) whose pid is alive, its cluster not', () => String(process.ppid)],
  ])('is created although a killed start left its initdb directory, an empty cluster directory and %s', async (_case, claim) => {
    const dataDir = await scratchDir('leftovers');
    await mkdir(join(dataDir, `postgres.initdb-${GONE_PID}`, 'global'), { recursive: true });
    await writeFile(join(dataDir, `postgres.initdb-${GONE_PID}`, 'PG_VERSION'), '18\n');
    await mkdir(join(dataDir, 'postgres')); // what a version without the guard left when killed before initdb
    await writeFile(join(dataDir, 'postgres.owner'), claim());

    await expectStartsAndServes(dataDir);

    expect((await readdir(dataDir)).sort()).toEqual(['postgres', 'postgres-password']); // claim given back, leftovers gone
  }, 60_000);

  it('starts although its lock file names a pid that now belongs to another process of PostgreSQL\'s OS user (reused after a reboot)', async () => {
    const dataDir = await scratchDir('reused-pid');
    const first = await startEmbeddedPostgres(dataDir);
    const lockFile = join(dataDir, 'postgres', 'postmaster.pid');
    const lock = await readFile(lockFile, 'utf8');
    await first.stop();
    // What a killed postmaster leaves, its pid now another process's that PostgreSQL may signal.
    const other = spawn('sleep', ['60'], { ...(await postgresOsUser()), stdio: 'ignore' });
    try {
      await writeFile(lockFile, lock.replace(/^\d+/, String(other.pid)));

      // PostgreSQL refused: lock file "postmaster.pid" already exists ... Is another postmaster (PID …) running?
      await expectStartsAndServes(dataDir);
      expect(other.exitCode).toBeNull(); // left alone
    } finally {
      other.kill();
    }
  }, 60_000);

  it('is refused, creating nothing, while the process that holds the claim runs', async () => {
    const dataDir = await scratchDir('claimed');
    await writeFile(join(dataDir, 'postgres.owner'), `${process.ppid} ${await startTimeOf(process.ppid)}`);

    await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(`is in use by another Specwright process (pid ${process.ppid})`);
    expect(existsSync(join(dataDir, 'postgres'))).toBe(false);
  });

  it('never deletes a cluster directory it cannot start: a half-made one an earlier version left is named, with what to do', async () => {
    const dataDir = await scratchDir('half-made');
    await mkdir(join(dataDir, 'postgres', 'base'), { recursive: true });
    await writeFile(join(dataDir, 'postgres', 'PG_VERSION'), '18\n');

    await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(/not a whole cluster \(no global\/pg_control\).*delete it and start again/);
    expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    expect(existsSync(join(dataDir, 'postgres.owner'))).toBe(false); // a failed start gives its claim back
  }, 30_000);

  it('names a cluster without its "postgres" database (initdb killed before making it, in an earlier version) and leaves it alone', async () => {
    const dataDir = await scratchDir('no-postgres-db');
    const cluster = await startEmbeddedPostgres(dataDir);
    const client = new pg.Client({ connectionString: cluster.ownerUrl });
    await client.connect();
    await client.query('drop database postgres');
    await client.end();
    await cluster.stop();

    await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(/has no "postgres" database: .*delete it and start again/);
    expect(existsSync(join(dataDir, 'postgres', 'global', 'pg_control'))).toBe(true);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false); // the cluster it started is stopped again
  }, 60_000);
});
