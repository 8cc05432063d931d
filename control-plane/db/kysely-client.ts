import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './database.ts';
import { preparingPool } from './prepared-statements.ts';

// bigint columns (counts, sizes) come back as JS numbers; values beyond 2^53 do not occur here.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export interface DatabaseHandle {
  db: Kysely<Database>;
  pool: pg.Pool;
}

export interface DatabaseOptions {
  max?: number;
  applicationName?: string;
  /** Prepare parameterised statements once per connection (see prepared-statements.ts). */
  prepareStatements?: boolean;
}

export function createDatabase(connectionString: string, options: DatabaseOptions = {}): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'specwright',
  });
  // An idle client losing its connection must not take the process down; the pool replaces it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const dialect = new PostgresDialect({ pool: options.prepareStatements ? preparingPool(pool) : pool });
  return { db: new Kysely<Database>({ dialect }), pool };
}
