import { expect } from 'vitest';

/** The error a call that must fail rejects with; a call that succeeds fails the test. */
export function failureOf(call: Promise<unknown>): Promise<Error> {
  return call.then(() => expect.unreachable('the call succeeded'), (error: unknown) => error as Error);
}
