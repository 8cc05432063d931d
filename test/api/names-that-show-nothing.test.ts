import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A name people read in lists must show something. "   " was refused, but a zero-width space, a
 * bidirectional control or the Hangul filler passed `trim()` and listed as a blank row. Names follow
 * the rule kit manifests' display names already did.
 */
const INVISIBLE = ['\u200b', '\u200b\u200d\u2060', '\u202e', '\u3164', '\u2800', ' \u00ad '];
const MESSAGE = 'must contain a visible character, not only spaces, zero-width characters or bidirectional controls';

let app: TestApp;
let key: string;
let projectId: string;
let organizationId: string;
let invitationToken: string;

beforeAll(async () => {
  app = await startTestApp();
  key = app.bootstrap.apiKey;
  organizationId = app.bootstrap.organizationId;
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Visible' } })).body.data.id;
  const invited = await call(app.url, '/api/customer-invitations', { apiKey: key, body: { organizationId, email: 'blank-name@customer.test' } });
  expect(invited.status, invited.text).toBe(201);
  invitationToken = invited.body.data.token;
});
afterAll(() => app?.stop());

/** Each route that takes a name, with the body that names `name` and the rows it would write. */
const attempts = (name: string): Array<[string, string, string, Record<string, unknown>, string, string]> => [
  ['create a project', 'POST', '/api/projects', { name }, 'name', 'projects'],
  ['rename a project', 'PATCH', `/api/projects/${projectId}`, { name }, 'name', "projects where name <> 'Visible'"],
  ['found an organization', 'POST', '/api/organizations', { name, slug: 'blank-org' }, 'name', 'organizations'],
  ['give it a display name', 'POST', '/api/organizations', { name: 'Shown', slug: 'blank-display', displayName: name }, 'displayName', 'organizations'],
  ['rename an organization', 'PUT', `/api/organizations/${organizationId}`, { displayName: name }, 'displayName', 'organizations where display_name is not null'],
  ['create a tenant', 'POST', '/api/admin/tenants', { name, ownerEmail: 'blank@tenant.test' }, 'name', 'tenants'],
  ['name its owner', 'POST', '/api/admin/tenants', { name: 'Shown', ownerEmail: 'blank-owner@tenant.test', ownerName: name }, 'ownerName', 'tenants'],
  ['name an API key', 'POST', '/api/developer/api-keys', { name }, 'name', 'api_keys'],
  ['accept an invitation as a new user', 'POST', `/api/customer-invitations/${invitationToken}/accept`, { name, password: 'a-long-enough-password' }, 'name', 'users'],
];

describe('a name that shows nothing', () => {
  it.each(INVISIBLE.map((name) => [JSON.stringify(name), name]))('(%s) is VALIDATION_ERROR on its field wherever a name is taken, and writes nothing', async (_shown, name) => {
    for (const [what, method, path, body, field, rows] of attempts(name)) {
      const before = await countRows(app.database.ownerUrl, rows);
      const response = await call(app.url, path, { method, apiKey: path.endsWith('/accept') ? undefined : key, body });
      expect([response.status, response.body.error?.code], `${what}: ${response.text}`).toEqual([400, 'VALIDATION_ERROR']);
      expect(response.body.error.details.issues, what).toEqual([{ field, issue: MESSAGE }]);
      expect(await countRows(app.database.ownerUrl, rows), what).toBe(before);
    }
  });

  it('is not one with a visible character among invisible ones, nor one of another script', async () => {
    for (const name of ['\u200bAcme', 'Ελλάς', '株式会社', '–', '🚀']) {
      const created = await call(app.url, '/api/projects', { apiKey: key, body: { name } });
      expect(created.status, `${JSON.stringify(name)}: ${created.text}`).toBe(201);
    }
  });
});
