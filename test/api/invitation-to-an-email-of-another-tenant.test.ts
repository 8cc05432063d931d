import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';

const PASSWORD = 'a long enough password 42';
let app: TestApp;
let foreign: Actor & { tenantId: string };

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const invite = async (email: string) => {
  const response = await call(app.url, '/api/customer-invitations', { apiKey: app.bootstrap.apiKey, body: { organizationId: app.bootstrap.organizationId, email } });
  expect(response.status, response.text).toBe(201);
  return response.body.data as { id: string; token: string };
};
const acceptAsNewUser = (token: string) => call(app.url, `/api/customer-invitations/${token}/accept`, { body: { name: 'Newcomer', password: PASSWORD } });

beforeAll(async () => {
  app = await startTestApp();
  foreign = await createTenant(app, 'Foreign');
});
afterAll(() => app?.stop());

describe('accepting, as a new user, an invitation to an email that has an account', () => {
  // It used to tell the invitee to sign in and accept as that user: accepting so then answered
  // FORBIDDEN, since a user belongs to one tenant. The invitation could never be accepted.
  it('says so when the account is in another tenant, instead of sending them to sign in, and changes nothing', async () => {
    const invitation = await invite(foreign.email.toUpperCase());
    const users = await countRows(app.database.ownerUrl, 'users');

    const response = await acceptAsNewUser(invitation.token);
    expect([response.status, response.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect(response.body.error.message).toMatch(/another tenant/);
    expect(response.body.error.message).not.toMatch(/sign in|userId/);

    expect(await countRows(app.database.ownerUrl, 'users')).toBe(users);
    expect(await sqlAsOwner('select status from customer_invitations where id = $1', [invitation.id])).toEqual([{ status: 'pending' }]);
  });

  it('still points an account of the invitation\'s own tenant to accepting as itself, which then works', async () => {
    const invitee = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Local');
    const invitation = await invite(invitee.email);

    const response = await acceptAsNewUser(invitation.token);
    expect([response.status, response.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect(response.body.error.message).toMatch(/sign in and accept as that user \(send userId\)/);

    const asThemselves = await call(app.url, `/api/customer-invitations/${invitation.token}/accept`, { apiKey: invitee.apiKey, body: { userId: invitee.userId } });
    expect(asThemselves.status, asThemselves.text).toBe(200);
  });
});
