import type { Socket } from 'node:net';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/**
 * How many distinct statement texts a process prepares. Kysely builds statements from the code's
 * query shapes, so the number in use is small and fixed; a shape that varies with its input (a list
 * of n values) stops being prepared past this bound instead of growing without limit.
 */
const MAX_PREPARED_STATEMENTS = 2_000;

// PostgreSQL refuses to reuse a prepared `select *` whose table gained or lost a column meanwhile.
const STALE_PLAN = { code: '0A000', message: 'cached plan must not change result type' };

const SENT_AHEAD = '/* sent ahead */ ';
const SENT_BEHIND = '/* sent behind */ ';
const NO_ROWS = { command: 'SELECT', rowCount: 0, rows: [] };

/**
 * Names for the statements a process prepares, one per distinct text, up to `maxStatements`; a text
 * past the bound gets none and runs unnamed. `prefix` keeps the names of different namers apart
 * (pg refuses one name for two texts on a connection).
 */
export function statementNamer(prefix: string, maxStatements = MAX_PREPARED_STATEMENTS): (text: string) => string | undefined {
  const names = new Map<string, string>();
  return (text) => {
    let name = names.get(text);
    if (name === undefined && names.size < maxStatements) {
      name = `${prefix}_${names.size}`;
      names.set(text, name);
    }
    return name;
  };
}

/** A statement as pg takes it, named (so prepared once per connection) when it has parameters and `nameFor` gives it a name. */
export function preparedQuery(nameFor: (text: string) => string | undefined, text: string, values: unknown[]): pg.QueryConfig {
  const name = values.length > 0 ? nameFor(text) : undefined;
  return name === undefined ? { text, values } : { name, text, values };
}

/** A pg client's socket (pg keeps it on its connection): what is written while it is corked leaves in one write when it is uncorked. */
export function socketOf(client: pg.PoolClient): Pick<Socket, 'cork' | 'uncork' | 'writableCorked'> {
  return (client as unknown as { connection: { stream: Socket } }).connection.stream;
}

/** PostgreSQL refused to reuse a prepared statement whose table changed shape (see STALE_PLAN). */
export function isStalePlan(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return code === STALE_PLAN.code && message?.includes(STALE_PLAN.message) === true;
}

/**
 * Marks raw SQL without parameters to be *sent ahead*: on a pipelining pool its call returns at once
 * (with no rows), it waits on the socket for the next statement, and its answer is awaited together
 * with the next statement's, so both cross to PostgreSQL in one write and one round trip. A failure
 * of it is the next statement's failure. Elsewhere (a pool that does not pipeline) the marked
 * statement runs like any other; the marker is an SQL comment.
 */
export function sentAhead(text: string): string {
  return `${SENT_AHEAD}${text}`;
}

/**
 * Marks raw SQL without parameters to be *sent behind*: on a pipelining pool its call returns at once
 * and nobody waits for its answer, so the connection can go back to the pool straight away. It
 * leaves with whatever is written on the connection next — under load, the next transaction's BEGIN
 * and first statement, once the pool has handed the connection on — or at the end of this turn of
 * the event loop, whichever comes first. PostgreSQL runs it before anything sent after it. Only for
 * a statement whose outcome changes nothing for anyone: a read-only transaction's COMMIT. Elsewhere
 * it runs like any other.
 */
export function sentBehind(text: string): string {
  return `${SENT_BEHIND}${text}`;
}

/**
 * The pool Kysely queries through, with every parameterised statement prepared once per connection
 * (a named statement in pg): PostgreSQL then parses it once and, after a few runs, reuses its plan.
 * Row-level security makes every plan carry the tenant policies, so planning afresh per call costs
 * about as much as running the query. Statements without parameters (BEGIN, COMMIT, raw SQL) run
 * as before.
 *
 * With pg's pipeline mode on (`pipeline: true` in the pool's config), a statement marked by
 * `sentAhead` (BEGIN with the tenant, tenant-transaction.ts) is not waited for on its own. Kysely
 * cannot do this itself: it runs a connection's statements strictly one after another, so a
 * pipelining client alone never has two of them in flight.
 *
 * A migration that changes a table's columns makes the prepared `select *` of connections opened
 * before it fail once; such a connection is closed on release, so the pool replaces it.
 */
export function preparingPool(pool: pg.Pool, options: { maxStatements?: number } = {}): PostgresPool {
  const pipelining = (pool.options as { pipeline?: boolean }).pipeline === true;
  const nameFor = statementNamer('kysely', options.maxStatements);

  return {
    options: pool.options,
    end: () => pool.end(),
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let stale = false;
      let ahead: Promise<unknown> | undefined;
      // Whether this checkout corked the socket for statements sent ahead (and so must uncork it).
      let corkedAhead = false;
      // pg's socket: statements written while it is corked leave together when it is uncorked.
      const stream = socketOf(client);
      const uncorkAhead = () => {
        if (!corkedAhead) return;
        corkedAhead = false;
        stream.uncork();
      };
      const query = async (text: string, values: unknown[]) => {
        if (pipelining && values.length === 0 && ahead === undefined && text.startsWith(SENT_BEHIND)) {
          stream.cork();
          client.query(text).catch(() => {});
          setImmediate(() => stream.uncork());
          return NO_ROWS;
        }
        if (pipelining && values.length === 0 && text.startsWith(SENT_AHEAD)) {
          // Held back until the next statement joins it: the two leave in one write. A socket that
          // is corked already holds a COMMIT sent behind (the last user's), which leaves at the end
          // of this turn: this statement leaves with it then, never later. Corking it again would
          // hold that COMMIT (and what its transaction holds) until this user's next statement.
          if (ahead === undefined && stream.writableCorked === 0) {
            stream.cork();
            corkedAhead = true;
          }
          const sent = client.query(text);
          ahead = ahead === undefined ? sent : Promise.all([ahead, sent]);
          // Reported with the next statement, which waits for it.
          ahead.catch(() => {});
          return NO_ROWS;
        }
        const waitingFor = ahead;
        ahead = undefined;
        const answer = client.query(preparedQuery(nameFor, text, values));
        uncorkAhead();
        try {
          if (waitingFor) await waitingFor;
          return await answer;
        } catch (error) {
          answer.catch(() => {});
          stale ||= isStalePlan(error);
          throw error;
        }
      };
      return {
        // A statement sent ahead that nothing followed: its answer was never read, so the
        // connection is not handed out again. It is uncorked first: pg closes a pipelining
        // connection once its statements are answered, which a corked one never are.
        release: (destroy?: boolean) => {
          uncorkAhead();
          client.release(destroy || stale || ahead !== undefined);
        },
        // A cursor (Kysely's streaming) goes to pg untouched.
        query: ((textOrCursor: string | object, values?: readonly unknown[]) =>
          typeof textOrCursor === 'string' ? query(textOrCursor, [...(values ?? [])]) : client.query(textOrCursor as never)) as unknown as PostgresPoolClient['query'],
      };
    },
  };
}
