import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { ZodError } from 'zod';
import { toWireError } from '../../control-plane/errors/coerce-error.ts';

/**
 * Inputs are checked for text PostgreSQL cannot store; should a path miss the check, the
 * database's own refusal must still read as the caller's mistake, not as an internal error.
 */
describe('toWireError on database refusals', () => {
  it('reads text the database cannot store as VALIDATION_ERROR, and other database errors as INTERNAL_ERROR', async () => {
    const client = new pg.Client({ connectionString: inject('postgres').ownerUrl });
    await client.connect();
    try {
      // One after the other: a pg client runs one query at a time.
      const refusals: unknown[] = [];
      for (const [text, values] of [[`select $1::text`, ['a\u0000b']], [`select $1::jsonb`, ['{"a": "\\u0000"}']], [`select 1/0`, []]] as const) {
        refusals.push(await client.query(text, [...values]).catch((error: unknown) => error));
      }
      expect(refusals.map((error) => toWireError(error).code)).toEqual(['VALIDATION_ERROR', 'VALIDATION_ERROR', 'INTERNAL_ERROR']);
      expect(toWireError(refusals[0]).message).toContain('cannot be stored');
    } finally {
      await client.end();
    }
  });
});

describe('toWireError on a zod failure', () => {
  it('cuts a long field or issue text and marks the cut, never between the halves of an emoji', () => {
    const error = new ZodError([
      { code: 'custom', path: ['metadata', `ab${'😀'.repeat(100)}`], message: 'must not contain the NUL character (\\u0000)' },
      { code: 'custom', path: ['name'], message: 'x'.repeat(1_000) },
    ]);
    expect(toWireError(error)).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Request validation failed',
      details: {
        issues: [
          // 64 characters would end inside the 27th emoji: it is left out whole.
          { field: `metadata.ab${'😀'.repeat(26)}…`, issue: 'must not contain the NUL character (\\u0000)' },
          { field: 'name', issue: `${'x'.repeat(300)}…` },
        ],
      },
    });
  });
});
