import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('POST /api/admin/tenants without ownerName', () => {
  it("names the owner by the email's local part, held to the 200 characters a given ownerName may have", async () => {
    const localPart = `owner.${'x'.repeat(290)}`;
    const ownerEmail = `${localPart}@long-local-part.test`;
    expect(ownerEmail.length).toBeLessThanOrEqual(320);
    const given = await call(app.url, '/api/admin/tenants', { apiKey: app.bootstrap.apiKey, body: { name: 'Long local part', ownerEmail, ownerName: localPart } });
    expect(given.status, 'a given name that long is refused').toBe(400);

    const created = await call(app.url, '/api/admin/tenants', { apiKey: app.bootstrap.apiKey, body: { name: 'Long local part', ownerEmail } });
    expect(created.status, created.text).toBe(201);
    const me = await call(app.url, '/api/me', { apiKey: created.body.data.apiKey });
    expect(me.status, me.text).toBe(200);
    expect(me.body.data.email).toBe(ownerEmail);
    expect(me.body.data.name).toBe(localPart.slice(0, 200));
    const [row] = await ownerQuery(app.database.ownerUrl, 'select name from users where id = $1', [created.body.data.userId]);
    expect(row.name).toHaveLength(200);
  });

  it('names an owner with an ordinary address by its whole local part', async () => {
    const created = await call(app.url, '/api/admin/tenants', { apiKey: app.bootstrap.apiKey, body: { name: 'Short local part', ownerEmail: 'Grace.Hopper+ops@navy.test' } });
    expect(created.status, created.text).toBe(201);
    const me = await call(app.url, '/api/me', { apiKey: created.body.data.apiKey });
    expect(me.body.data.name).toBe('Grace.Hopper+ops');
  });
});
