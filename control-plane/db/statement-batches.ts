import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { isStalePlan, preparedQuery, socketOf, statementNamer } from './prepared-statements.ts';

/**
 * Single statements that need no transaction of their own — the checks every request makes before
 * its transaction (the API-key look-up, the rate count) — sent in batches: every statement issued
 * during one turn of the event loop leaves in one write on one pipelining connection, and each runs
 * on its own (pg ends each with a Sync: its own implicit transaction, its failure its own). A
 * request's key check and rate count thus cost one round trip on one connection instead of two on
 * two, and under load the statements of many requests share a write.
 *
 * This wants a pipelining pool (`pipeline: true`, as the API's is): elsewhere the statements of a
 * batch still share its connection, but run one after another.
 *
 * `query` takes a statement as pg's `client.query(config)` does, so rate-limiter-flexible's
 * PostgreSQL store can use it as its client; `kyselyPool` lets a Kysely instance run single
 * statements through it. A transaction cannot: each batch may use another connection, so BEGIN is
 * refused.
 */
export interface StatementBatches {
  query(statement: pg.QueryConfig): Promise<pg.QueryResult>;
  kyselyPool(): PostgresPool;
}

interface Pending {
  statement: pg.QueryConfig;
  resolve(result: pg.QueryResult): void;
  reject(error: unknown): void;
}

const OPENS_TRANSACTION = /^\s*(begin|start\s+transaction)\b/i;

export function statementBatches(pool: pg.Pool): StatementBatches {
  const nameFor = statementNamer('single');
  let pending: Pending[] = [];

  async function send(batch: Pending[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    const stream = socketOf(client);
    stream.cork();
    const answers = batch.map(({ statement }) => client.query(statement));
    stream.uncork();
    const outcomes = await Promise.allSettled(answers);
    let stale = false;
    outcomes.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') return batch[index]!.resolve(outcome.value);
      stale ||= isStalePlan(outcome.reason);
      batch[index]!.reject(outcome.reason);
    });
    // A connection holding a stale plan is not reused (pg-pool drops one whose socket closed).
    client.release(stale);
  }

  function query(statement: pg.QueryConfig): Promise<pg.QueryResult> {
    if (OPENS_TRANSACTION.test(statement.text)) return Promise.reject(new Error('Batched statements run on their own; a transaction needs a connection of its own'));
    return new Promise((resolve, reject) => {
      if (pending.length === 0) {
        // After the I/O of this turn of the event loop: every statement issued meanwhile joins.
        setImmediate(() => {
          const batch = pending;
          pending = [];
          void send(batch);
        });
      }
      pending.push({ statement, resolve, reject });
    });
  }

  return {
    query,
    kyselyPool: () => ({
      options: pool.options,
      // The pool belongs to the database handle, which ends it.
      end: async () => {},
      async connect(): Promise<PostgresPoolClient> {
        return {
          release: () => {},
          query: ((text: string, values?: readonly unknown[]) => {
            if (typeof text !== 'string') throw new Error('Batched statements do not stream rows');
            return query(preparedQuery(nameFor, text, [...(values ?? [])]));
          }) as unknown as PostgresPoolClient['query'],
        };
      },
    }),
  };
}
