import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// A PUT whose fields are all optional is documented `required: false`: leaving the body out means
// no fields. Such a call, or one with `{}`, wrote updated_at all the same, so a client watching
// updatedAt saw a change that never happened (projects' PATCH was fixed for this before).

let app: TestApp;
let orgId: string;
const storedRow = async () => (await ownerQuery(app.database.ownerUrl, 'select name, slug, display_name, settings, updated_at from organizations where id = $1', [orgId]))[0];

beforeAll(async () => {
  app = await startTestApp();
  const created = await call(app.url, '/api/organizations', { apiKey: app.bootstrap.apiKey, body: { name: 'Quiet', slug: 'quiet-agency', displayName: 'Q', settings: { theme: 'dark' } } });
  expect(created.status, created.text).toBe(201);
  orgId = created.body.data.id;
  // Back-date the stamp, so a write in the same millisecond as the create cannot hide.
  await ownerQuery(app.database.ownerUrl, "update organizations set updated_at = updated_at - interval '1 hour' where id = $1", [orgId]);
});
afterAll(() => app?.stop());

describe('PUT /api/organizations/{id} naming no field', () => {
  it.each([
    ['an empty object', { body: {} }],
    ['no body at all', {}],
  ])('with %s changes nothing, updatedAt included, and answers the organization as it is', async (_kind, options) => {
    const before = await storedRow();
    const shown = await call(app.url, `/api/organizations/${orgId}`, { apiKey: app.bootstrap.apiKey });
    const response = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: app.bootstrap.apiKey, ...options });
    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toEqual(shown.body.data);
    expect(await storedRow()).toEqual(before);
  });

  it('still answers a caller without the role as before, and a field sent still changes it', async () => {
    const other = await call(app.url, '/api/organizations/00000000-0000-4000-8000-000000000000', { method: 'PUT', apiKey: app.bootstrap.apiKey, body: {} });
    expect([other.status, other.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    const before = await storedRow();
    const renamed = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: app.bootstrap.apiKey, body: { displayName: null } });
    expect([renamed.status, renamed.body.data?.displayName]).toEqual([200, null]);
    expect(new Date(renamed.body.data.updatedAt).getTime()).toBeGreaterThan(before.updated_at.getTime());
  });
});
