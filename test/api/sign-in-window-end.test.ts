import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../control-plane/domains/users/password-hash.ts';
import { callFrom } from '../helpers/http-from.ts';
import { holdTableLock, untilLockWaiters } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A sign-in takes a point from each failure budget as it starts and a success hands it back. A
 * success whose window ends while it is checked must not hand the point to the next window, where
 * it would allow one failed attempt more than the budget.
 */
const WINDOW_SECONDS = 3;
const PASSWORD = 'correct horse battery staple';

let app: TestApp;
let next = 1;
let lastAddress = 1;
const newAddress = () => `127.0.0.${++lastAddress}`;
const login = (from: string, email: string, password: string) => callFrom(from, app.url, '/api/auth/login', { email, password });

async function user(label: string): Promise<string> {
  const email = `${label}-${next++}@window-end.test`;
  await ownerQuery(app.database.ownerUrl, 'insert into users (tenant_id, email, name, password_hash) values ($1, $2, $3, $4)', [app.bootstrap.tenantId, email, label, await hashPassword(PASSWORD)]);
  return email;
}

/** The statuses of failed attempts at one account, each from an address of its own (the per-email budget). */
async function failuresAtAccount(email: string, attempts: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < attempts; i += 1) statuses.push((await login(newAddress(), email, `wrong-${i}`)).status);
  return statuses;
}

/** The statuses of failed attempts from one address, each at an account of its own (the per-address budget). */
async function failuresFromAddress(from: string, attempts: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < attempts; i += 1) statuses.push((await login(from, `spray-${next++}@window-end.test`, 'guess')).status);
  return statuses;
}

beforeAll(async () => {
  app = await startTestApp({
    env: {
      RATE_LIMIT_GENERAL_PER_MINUTE: '1000',
      LOGIN_FAILURE_WINDOW_SECONDS: String(WINDOW_SECONDS),
      LOGIN_FAILURES_PER_EMAIL_AND_ADDRESS: '10',
      LOGIN_FAILURES_PER_ADDRESS: '3',
      LOGIN_FAILURES_PER_EMAIL: '3',
    },
  });
});
afterAll(() => app?.stop());

describe('a successful sign-in', () => {
  it('hands its points back within its window: successes never count as failures', async () => {
    const email = await user('often');
    const from = newAddress();
    for (let i = 0; i < 3; i += 1) expect((await login(from, email, PASSWORD)).status).toBe(200);
    expect(await failuresAtAccount(email, 4)).toEqual([401, 401, 401, 429]);
    expect(await failuresFromAddress(from, 4)).toEqual([401, 401, 401, 429]);
  });

  it('whose window ends while it is checked leaves the next window its budget, not one failure more', async () => {
    const email = await user('straddle');
    const from = newAddress();
    // The sign-in takes its points, then waits to read the user until its window has ended.
    const release = await holdTableLock(app.database.ownerUrl, 'users');
    const signingIn = login(from, email, PASSWORD);
    try {
      await untilLockWaiters(app.database.ownerUrl);
      await sleep(WINDOW_SECONDS * 1000 + 300);
    } finally {
      await release();
    }
    expect((await signingIn).status).toBe(200);

    expect(await failuresAtAccount(email, 4)).toEqual([401, 401, 401, 429]);
    expect(await failuresFromAddress(from, 4)).toEqual([401, 401, 401, 429]);
  });
});
