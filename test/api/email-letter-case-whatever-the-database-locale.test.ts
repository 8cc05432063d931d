import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withDatabase } from '../helpers/database-url.ts';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const PASSWORD = 'a long enough password 42';
let app: TestApp;

/**
 * An external PostgreSQL keeps the locale it was made with. Under a Turkish one, lower('I') is
 * 'ı' (U+0131), not 'i': an email compared with the database's lower() is no longer the one the
 * service folded itself, nor the same person in another letter case.
 */
beforeAll(async () => {
  const { ownerUrl, appUrl } = inject('postgres');
  const name = `test_tr_${randomBytes(6).toString('hex')}`;
  await ownerQuery(ownerUrl, `create database "${name}" template template0 encoding 'UTF8' locale_provider icu icu_locale 'tr' locale 'C'`);
  const database = { name, ownerUrl: withDatabase(ownerUrl, name), appUrl: withDatabase(appUrl, name) };
  expect(await ownerQuery(database.ownerUrl, `select lower('I') as folded`)).toEqual([{ folded: 'ı' }]);
  app = await startTestApp({ database });
});
afterAll(() => app?.stop());

const createTenant = (name: string, ownerEmail: string) => call(app.url, '/api/admin/tenants', { apiKey: app.bootstrap.apiKey, body: { name, ownerEmail } });
const invite = (email: string) => call(app.url, '/api/customer-invitations', { apiKey: app.bootstrap.apiKey, body: { organizationId: app.bootstrap.organizationId, email } });
const login = (email: string) => call(app.url, '/api/auth/login', { body: { email, password: PASSWORD } });

describe('an email in another letter case, on a database whose locale lowers I to ı', () => {
  it('is the owner of an existing tenant: a second tenant for it is refused', async () => {
    expect((await createTenant('First', 'IRIS@locale.test')).status).toBe(201);
    const again = await createTenant('Second', 'iris@locale.test');
    expect(again.status, again.text).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
  });

  it('has a pending invitation already', async () => {
    const invited = await invite('IVAN@locale.test');
    expect(invited.status, invited.text).toBe(201);
    const again = await invite('ivan@locale.test');
    expect(again.status, again.text).toBe(409);
    expect(again.body.error.details).toMatchObject({ invitationId: invited.body.data.id });
  });

  it('signs in as the user who accepted an invitation to it', async () => {
    const invited = await invite('IDA@locale.test');
    expect(invited.status, invited.text).toBe(201);
    const accepted = await call(app.url, `/api/customer-invitations/${invited.body.data.token}/accept`, { body: { name: 'Ida', password: PASSWORD } });
    expect(accepted.status, accepted.text).toBe(200);
    for (const email of ['ida@locale.test', 'IDA@locale.test', 'Ida@Locale.Test']) {
      const signedIn = await login(email);
      expect(signedIn.status, `${email}: ${signedIn.text}`).toBe(200);
    }
    // Another tenant's owner under it would be the same person twice.
    expect((await createTenant('Fourth', 'ida@LOCALE.TEST')).status).toBe(409);
  });
});

describe('an email outside ASCII', () => {
  // Folding ASCII letters is all the letter case there is to fold only while nothing else gets in:
  // JavaScript and PostgreSQL lower 'İ' and a final 'Σ' differently.
  it.each([
    ['a dotted capital I (U+0130)', 'İris@locale.test'],
    ['a Cyrillic е (U+0435)', 'iris@locale.t\u0435st'],
    ['a capital sigma, final (U+03A3)', 'ΑΣ@locale.test'],
    ['a Kelvin sign (U+212A)', '\u212Aate@locale.test'],
  ])('is refused wherever an email is taken: with %s', async (_, email) => {
    for (const response of [await createTenant('Third', email), await invite(email), await login(email)]) {
      expect(response.status, response.text).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
    }
  });
});
