import { createServer } from 'node:net';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { isConnectTimeout, isLoginOrDatabaseRefusal } from '../db/postgres-errors.ts';
import type { Logger } from '../logger.ts';

// Start-time checks, run before migrations and the first run: a start that cannot work fails in a
// moment, naming the variable to fix, not after building a cluster and applying migrations.

/**
 * Binds HOST:PORT for a moment and lets go, so a port in use or a host that does not resolve fails
 * the start before the database work. Not held: the real listen comes once boot is done, and says
 * the same should the port be taken meanwhile.
 */
export async function assertCanListen(config: Config): Promise<void> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error) => reject(listenFailure(error, config)));
    probe.listen(config.port, config.host, () => probe.close(() => resolve()));
  });
}

/** Node's listen errors (`listen EADDRINUSE: …`) name neither variable: say which one to change. */
export function listenFailure(error: NodeJS.ErrnoException, config: Config): Error {
  const { port, host } = config;
  switch (error.code) {
    case 'EADDRINUSE':
      return new Error(`PORT ${port} on ${host} is in use: stop what listens there, or set PORT (or HOST) to another`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return new Error(`HOST ${host} cannot be resolved: set HOST to an address of this machine, or a name that resolves to one`);
    case 'EADDRNOTAVAIL':
      return new Error(`HOST ${host} is not an address of this machine: set HOST to one of its addresses (0.0.0.0 for all)`);
    case 'EACCES':
      return new Error(`PORT ${port} on ${host} needs privileges this process does not have: set PORT to 1024 or above`);
    default:
      return new Error(`cannot listen on PORT ${port} on HOST ${host}: ${error.message}`);
  }
}

/** A boot that cannot connect names the variable to fix and where it points, never its password. */
export async function assertReachable(pool: pg.Pool, variable: string, url: string): Promise<void> {
  try {
    await pool.query('select 1');
  } catch (error) {
    throw cannotConnect(variable, url, error, pool);
  }
}

/**
 * APP_DATABASE_URL fails the start when its server answers no — a login it refuses (a wrong
 * password or user) or a database that does not exist — since that never passes. One that cannot
 * be reached may be a database that is away: the service starts, answers 503 until it is back
 * (health says so), and a warning names the variable.
 */
export async function assertAppDatabaseAccepts(pool: pg.Pool, url: string, log: Logger): Promise<void> {
  try {
    await pool.query('select 1');
  } catch (error) {
    if (isLoginOrDatabaseRefusal(error)) throw cannotConnect('APP_DATABASE_URL', url, error, pool);
    log.warn({ database: describeDatabaseUrl(url) }, `the database in APP_DATABASE_URL cannot be reached yet (${whatWentWrong(error, pool)}); requests answer 503 until it can`);
  }
}

function cannotConnect(variable: string, url: string, error: unknown, pool: pg.Pool): Error {
  return new Error(`cannot connect to the database in ${variable} (${describeDatabaseUrl(url)}): ${whatWentWrong(error, pool)}`);
}

/** pg's words for a connection not had in time name no setting: say which. */
function whatWentWrong(error: unknown, pool: pg.Pool): string {
  return isConnectTimeout(error) ? `no answer within DATABASE_CONNECT_TIMEOUT_MS (${pool.options.connectionTimeoutMillis} ms)` : (error as Error).message;
}

/** Where a database URL points (user, host, database), without its password. */
function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.username ? `${decodeURIComponent(parsed.username)}@` : ''}${parsed.host}${parsed.pathname}`;
  } catch {
    return 'not a URL';
  }
}
