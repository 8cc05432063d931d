import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let next = 0;

async function invitation(): Promise<{ token: string; email: string }> {
  const email = `bounds-${++next}@invitee.test`;
  const created = await call(app.url, '/api/customer-invitations', { apiKey: app.bootstrap.apiKey, body: { organizationId: app.bootstrap.organizationId, email } });
  expect(created.status, created.text).toBe(201);
  return { token: created.body.data.token, email };
}

const acceptAsNewUser = (token: string, password: string) =>
  call(app.url, `/api/customer-invitations/${token}/accept`, { body: { name: 'Bounded', password } });

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '1000' } });
});
afterAll(() => app?.stop());

describe('password bounds', () => {
  it('let a user sign in with the longest password that can be set, as typed', async () => {
    // U+1F82 arrives decomposed as four code points that NFKC composes into one character: 256
    // characters as hashed (the most a new password may have) are 1,024 code points on the wire.
    const password = '\u1F82'.normalize('NFD').repeat(256);
    expect([[...password].length, [...password.normalize('NFKC')].length]).toEqual([1024, 256]);
    const { token, email } = await invitation();
    const accepted = await acceptAsNewUser(token, password);
    expect(accepted.status, accepted.text).toBe(200);

    const login = await call(app.url, '/api/auth/login', { body: { email, password } });
    expect(login.status, login.text).toBe(200);
  });

  it('refuse a password past every bound with one message, and create nothing', async () => {
    const { token } = await invitation();
    const users = await countRows(app.database.ownerUrl, 'users');
    const accepted = await acceptAsNewUser(token, 'x'.repeat(5000));
    expect([accepted.status, accepted.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(accepted.body.error.details.issues).toEqual([{ field: 'password', issue: 'a password has at most 256 characters' }]);
    expect(await countRows(app.database.ownerUrl, 'users')).toBe(users);
    expect((await call(app.url, `/api/customer-invitations/${token}`)).body.data.status).toBe('pending');
  });
});
