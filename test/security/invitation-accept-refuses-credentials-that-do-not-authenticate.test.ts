import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../control-plane/auth/api-key-format.ts';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// Accepting an invitation takes credentials optionally: a new user sends none, an existing one
// sends theirs. Credentials that are sent and do not authenticate are refused, as on every route
// that takes them ("a request carries one credential … answers 401 … and changes nothing"), instead
// of being dropped while the request goes on to create an account.
const PASSWORD = 'a long enough password 42';
let app: TestApp;
let next = 0;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

async function invite(): Promise<{ id: string; token: string; email: string }> {
  const response = await call(app.url, '/api/customer-invitations', {
    apiKey: app.bootstrap.apiKey,
    body: { organizationId: app.bootstrap.organizationId, email: `credentials-${++next}-${Date.now()}@invitee.test` },
  });
  expect(response.status, response.text).toBe(201);
  return response.body.data;
}

const acceptWith = (token: string, headers: Record<string, string>) =>
  call(app.url, `/api/customer-invitations/${token}/accept`, { body: { name: 'New Person', password: PASSWORD }, headers });

describe('POST /api/customer-invitations/{token}/accept as a new user, with credentials that do not authenticate', () => {
  it('answers 401 and creates no user, no membership, and leaves the invitation pending', async () => {
    const madeUpKey = generateApiKey().key;
    const cases: Array<[string, Record<string, string>]> = [
      ['a good key beside a bearer token', { 'x-api-key': app.bootstrap.apiKey, authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x' }],
      ['a key nobody holds', { 'x-api-key': madeUpKey }],
      ['a bearer token that is not one', { authorization: 'Bearer not-a-token' }],
    ];
    for (const [label, headers] of cases) {
      const invitation = await invite();
      const response = await acceptWith(invitation.token, headers);
      expect([response.status, response.body?.error?.code], `${label}: ${response.text}`).toEqual([401, 'UNAUTHORIZED']);
      expect(await countRows(app.database.ownerUrl, 'users where lower(email) = lower($1)', [invitation.email]), label).toBe(0);
      expect(await ownerQuery(app.database.ownerUrl, 'select status from customer_invitations where id = $1', [invitation.id]), label).toEqual([{ status: 'pending' }]);

      // The same accept without the credentials goes through: the token was not spent.
      const plain = await acceptWith(invitation.token, {});
      expect(plain.status, plain.text).toBe(200);
      expect(plain.body.data.userCreated).toBe(true);
    }
  });
});
