import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveLoginThrottleKey } from '../../control-plane/domains/users/login-throttle.ts';
import { callFrom } from '../helpers/http-from.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ env: { LOGIN_FAILURES_PER_EMAIL_AND_ADDRESS: '3' } });
});
afterAll(() => app?.stop());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const counterKeys = async () => (await ownerQuery<{ key: string }>(app.database.ownerUrl, "select key from rate_limits where key like 'login%'")).map((row) => row.key);

describe('the failed sign-in counters', () => {
  it('are keyed so that whoever reads rate_limits cannot test a guessed email against them', async () => {
    const email = 'guessable.person@counter-keys.test';
    const from = '127.0.0.77';
    const response = await callFrom(from, app.url, '/api/auth/login', { email: 'Guessable.Person@Counter-Keys.test', password: 'a wrong guess' });
    expect(response.status).toBe(401);

    const keys = await counterKeys();
    expect(keys).toHaveLength(3);
    // A plain digest of the address (alone or beside the email) is one hash away from a guess.
    const guesses = [email, ...[from, `::ffff:${from}`].flatMap((address) => [`${email}\n${address}`, address])].map(sha256);
    for (const guess of guesses) expect(keys.filter((key) => key.includes(guess))).toEqual([]);
    // The per-email counter is an HMAC under a key only SERVER_SECRET's holders can derive.
    const keyed = createHmac('sha256', deriveLoginThrottleKey(TEST_SERVER_SECRET)).update(email).digest('hex');
    expect(keys).toContain(`login_email:${keyed}`);
  });

  it('still count one account in any letter case as one', async () => {
    const from = '127.0.0.78';
    for (const email of ['case@counter-keys.test', 'CASE@counter-keys.test', 'Case@Counter-Keys.TEST']) {
      expect((await callFrom(from, app.url, '/api/auth/login', { email, password: 'wrong' })).status).toBe(401);
    }
    expect((await callFrom(from, app.url, '/api/auth/login', { email: 'cAsE@counter-keys.test', password: 'wrong' })).status).toBe(429);
  });
});
