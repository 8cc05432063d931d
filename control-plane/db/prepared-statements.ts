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

/**
 * The pool Kysely queries through, with every parameterised statement prepared once per connection
 * (a named statement in pg): PostgreSQL then parses it once and, after a few runs, reuses its plan.
 * Row-level security makes every plan carry the tenant policies, so planning afresh per call costs
 * about as much as running the query. Statements without parameters (BEGIN, COMMIT, raw SQL) run
 * as before.
 *
 * A migration that changes a table's columns makes the prepared `select *` of connections opened
 * before it fail once; such a connection is closed on release, so the pool replaces it.
 */
export function preparingPool(pool: pg.Pool, options: { maxStatements?: number } = {}): PostgresPool {
  const maxStatements = options.maxStatements ?? MAX_PREPARED_STATEMENTS;
  const names = new Map<string, string>();
  const nameFor = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < maxStatements) {
      name = `kysely_${names.size}`;
      names.set(text, name);
    }
    return name;
  };

  return {
    options: pool.options,
    end: () => pool.end(),
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let stale = false;
      const query = async (text: string, values: unknown[]) => {
        const name = values.length > 0 ? nameFor(text) : undefined;
        try {
          return name === undefined ? await client.query(text, values) : await client.query({ name, text, values });
        } catch (error) {
          const { code, message } = error as { code?: string; message?: string };
          if (code === STALE_PLAN.code && message?.includes(STALE_PLAN.message)) stale = true;
          throw error;
        }
      };
      return {
        release: (destroy?: boolean) => client.release(destroy || stale),
        // A cursor (Kysely's streaming) goes to pg untouched.
        query: ((textOrCursor: string | object, values?: readonly unknown[]) =>
          typeof textOrCursor === 'string' ? query(textOrCursor, [...(values ?? [])]) : client.query(textOrCursor as never)) as unknown as PostgresPoolClient['query'],
      };
    },
  };
}
