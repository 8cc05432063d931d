import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { DEFAULT_DATABASE_CONNECT_TIMEOUT_MS, MAX_TIMER_MS } from '../config.ts';
import type { Database } from './database.ts';
import { PatientPool } from './patient-pool.ts';
import { preparingPool } from './prepared-statements.ts';
import { statementBatches, type StatementBatches } from './statement-batches.ts';

// bigint columns (counts, sizes) come back as JS numbers; values beyond 2^53 do not occur here.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export interface DatabaseHandle {
  db: Kysely<Database>;
  pool: pg.Pool;
  /** The pool's single statements outside any transaction, sent in batches (statement-batches.ts). */
  batches: StatementBatches;
  /** Kysely over `batches`: for single statements only (a transaction is refused). */
  batchedDb: Kysely<Database>;
  /** Ends waiting for a database that is away, where the pool waits at all (shutdown calls it). */
  stopWaiting(): void;
}

export interface DatabaseOptions {
  max?: number;
  applicationName?: string;
  /**
   * Prepare parameterised statements once per connection, and send BEGIN ahead of a transaction's
   * first statement in one round trip (pg's pipeline mode; see prepared-statements.ts). Pipelining
   * clients refuse cursors, so nothing on such a pool streams rows.
   */
  prepareStatements?: boolean;
  /** New connections wait this long for a database that is briefly away (see patient-pool.ts). */
  patientConnectMs?: number;
  /**
   * How long a connection may take to be had (DATABASE_CONNECT_TIMEOUT_MS): opened, or freed by
   * another user of a full pool. pg waits for ever by default, so a database that accepts
   * connections and never answers held every request, and a boot, with it.
   */
  connectTimeoutMs?: number;
  /**
   * How long one statement may take (DATABASE_STATEMENT_TIMEOUT_MS). PostgreSQL cancels a statement
   * that runs or waits (on a lock) longer, and the connection stays usable. A server that went
   * silent cancels nothing, so the client gives up STATEMENT_GIVE_UP_MARGIN_MS later and drops the
   * connection, which only a pipelining pool can do safely: needs `prepareStatements`.
   */
  statementTimeoutMs?: number;
}

/** How much longer than the statement timeout the client waits before it takes the server for silent. */
const STATEMENT_GIVE_UP_MARGIN_MS = 2_000;

export function createDatabase(connectionString: string, options: DatabaseOptions = {}): DatabaseHandle {
  const { statementTimeoutMs } = options;
  // pg abandons a query it already sent only by dropping the connection, and only when pipelining;
  // otherwise it would hand the next user a connection still waiting for the old answer.
  if (statementTimeoutMs !== undefined && options.prepareStatements !== true) throw new Error('A statement timeout needs a pipelining pool (prepareStatements)');
  const config = {
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'specwright',
    pipeline: options.prepareStatements === true,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_DATABASE_CONNECT_TIMEOUT_MS,
    ...(statementTimeoutMs === undefined ? {} : { statement_timeout: statementTimeoutMs, query_timeout: Math.min(statementTimeoutMs + STATEMENT_GIVE_UP_MARGIN_MS, MAX_TIMER_MS) }),
  };
  const pool = options.patientConnectMs === undefined ? new pg.Pool(config) : new PatientPool({ ...config, patienceMs: options.patientConnectMs });
  // An idle client losing its connection must not take the process down; the pool replaces it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const dialect = new PostgresDialect({ pool: options.prepareStatements ? preparingPool(pool) : pool });
  const batches = statementBatches(pool);
  return {
    db: new Kysely<Database>({ dialect }),
    pool,
    batches,
    batchedDb: new Kysely<Database>({ dialect: new PostgresDialect({ pool: batches.kyselyPool() }) }),
    stopWaiting: () => (pool instanceof PatientPool ? pool.stopWaiting() : undefined),
  };
}
