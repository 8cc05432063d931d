import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, permanentRefusalOf } from '../../control-plane/db/postgres-errors.ts';
import { whyNotToRetry } from '../../control-plane/domains/kit-executions/kit-execution.job.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

let ownerUrl: string;
beforeAll(async () => {
  ownerUrl = (await createTestDatabase()).ownerUrl;
});

/** The error PostgreSQL answers `statement` with, on a connection of its own. */
async function refusalOf(run: (client: pg.Client) => Promise<unknown>): Promise<unknown> {
  const client = new pg.Client({ connectionString: ownerUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    await run(client);
  } catch (error) {
    return error;
  } finally {
    await client.end().catch(() => {});
  }
  throw new Error('the statement succeeded');
}

const firstAttempt = { attempts: 1, max_attempts: 25 };

describe('database errors, as PostgreSQL really answers them', () => {
  it('takes a statement with more parameters than the protocol carries as permanent, not as the database being away', async () => {
    const count = 70_000;
    const placeholders = Array.from({ length: count }, (_, i) => `$${i + 1}`).join(',');
    const error = await refusalOf((client) => client.query(`select array[${placeholders}]`, Array.from({ length: count }, (_, i) => i)));
    expect((error as { code?: string }).code).toBe('08P01');
    expect(isDatabaseUnavailable(error)).toBe(false);
    expect(permanentRefusalOf(error)).toEqual({ description: 'a statement it cannot take (protocol violation) (SQLSTATE 08P01)' });
    // A kit execution whose outcome meets it fails at once instead of running again for every attempt.
    expect(whyNotToRetry(error, firstAttempt)).toBe('the database refused its outcome: a statement it cannot take (protocol violation) (SQLSTATE 08P01)');
  });

  it('takes a protocol violation of another kind (a pooler without a server connection) as the database being away', () => {
    const fromPooler = Object.assign(new Error('no more connections allowed (max_client_conn)'), { code: '08P01' });
    expect(isDatabaseUnavailable(fromPooler)).toBe(true);
    expect(permanentRefusalOf(fromPooler)).toBeUndefined();
    expect(whyNotToRetry(fromPooler, firstAttempt)).toBeNull();
  });

  it('takes a lost connection as the database being away, which a retry may cure', async () => {
    const error = await refusalOf((client) => client.query('select pg_terminate_backend(pg_backend_pid())'));
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(permanentRefusalOf(error)).toBeUndefined();
    expect(whyNotToRetry(error, firstAttempt)).toBeNull();
  });
});

