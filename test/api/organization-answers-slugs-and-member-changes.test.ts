import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { tableSnapshot } from '../helpers/table-snapshot.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';

const PASSWORD = 'a long enough password for members';
let app: TestApp;
let founder: Actor & { tenantId: string; organizationId: string };
const sql = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);
const snapshot = () => tableSnapshot(app.database.ownerUrl);

beforeAll(async () => {
  app = await startTestApp();
  founder = await createTenant(app, 'Audit');
});
afterAll(() => app?.stop());

/** A user who joined `organizationId` with `role` through an invitation and signed in: a bearer session, no API key. */
async function signedInMember(organizationId: string, role: 'member' | 'customer', name: string): Promise<{ userId: string; authorization: string }> {
  const email = `${name.toLowerCase()}-${Date.now()}@audit.test`;
  const invitation = await call(app.url, '/api/customer-invitations', { apiKey: founder.apiKey, body: { organizationId, email, roleId: role } });
  expect(invitation.status, invitation.text).toBe(201);
  const accepted = await call(app.url, `/api/customer-invitations/${invitation.body.data.token}/accept`, { body: { name, password: PASSWORD } });
  expect(accepted.status, accepted.text).toBe(200);
  const login = await call(app.url, '/api/auth/login', { body: { email, password: PASSWORD } });
  expect(login.status, login.text).toBe(200);
  return { userId: accepted.body.data.userId, authorization: `Bearer ${login.body.data.accessToken}` };
}

describe('POST /api/organizations', () => {
  it('answers id, tenantId, name, slug, ownerId (the caller) and createdAt, and makes the caller its owner', async () => {
    const created = await call(app.url, '/api/organizations', {
      apiKey: founder.apiKey,
      body: { name: 'Answer Co', slug: 'answer-co-7', displayName: 'Answer', settings: { theme: 'light', branding: { logo: 'https://cdn.example/a.png' } } },
    });
    expect(created.status, created.text).toBe(201);
    const data = created.body.data;
    expect(data).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenantId: founder.tenantId,
      name: 'Answer Co',
      slug: 'answer-co-7',
      displayName: 'Answer',
      ownerId: founder.userId,
      settings: { theme: 'light', branding: { logo: 'https://cdn.example/a.png' } },
    });
    expect(new Date(data.createdAt).toISOString()).toBe(data.createdAt);
    expect(await sql('select user_id, role from organization_members where organization_id = $1', [data.id])).toEqual([{ user_id: founder.userId, role: 'owner' }]);
    const members = await call(app.url, `/api/organizations/${data.id}/members`, { apiKey: founder.apiKey });
    expect(members.body.data.members.map((m: { userId: string; role: string }) => `${m.userId}:${m.role}`)).toEqual([`${founder.userId}:owner`]);
  });

  it('refuses each slug rule broken alone (capitals, underscore, edge or double hyphen, non-ASCII) by field, on create, update and slug-check, and writes nothing', async () => {
    const before = await snapshot();
    for (const slug of ['Acme-agency', 'acme_agency', '-acme', 'acme-', 'ac--me', 'acmé-agency', 'acme agency']) {
      const created = await call(app.url, '/api/organizations', { apiKey: founder.apiKey, body: { name: 'Slugged', slug } });
      expect([created.status, created.body.error?.code, created.body.error?.details?.issues?.map((i: { field: string }) => i.field)], slug).toEqual([400, 'VALIDATION_ERROR', ['slug']]);
      const updated = await call(app.url, `/api/organizations/${founder.organizationId}`, { method: 'PUT', apiKey: founder.apiKey, body: { slug } });
      expect([updated.status, updated.body.error?.code], slug).toEqual([400, 'VALIDATION_ERROR']);
      const checked = await call(app.url, `/api/organizations/slug-check?slug=${encodeURIComponent(slug)}`, { apiKey: founder.apiKey });
      expect([checked.status, checked.body.error?.code], slug).toEqual([400, 'VALIDATION_ERROR']);
    }
    expect(await snapshot()).toEqual(before);
    // Lowercase letters, digits and single inner hyphens are a slug.
    expect((await call(app.url, '/api/organizations', { apiKey: founder.apiKey, body: { name: 'Digits', slug: '42-agency-9' } })).status).toBe(201);
  });
});

describe('member routes given bad input', () => {
  it('refuse unknown roles, malformed ids, missing fields and a member raising their own role, and change nothing', async () => {
    const orgId = founder.organizationId;
    const member = await createUserInTenant(app, sql, founder.tenantId, 'Mona');
    const newcomer = await createUserInTenant(app, sql, founder.tenantId, 'Nico');
    expect((await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: founder.apiKey, body: { userId: member.userId, role: 'member' } })).status).toBe(201);
    const before = await snapshot();
    const attempts: Array<[string, string, string, unknown, string, string]> = [
      ['add: unknown role', 'POST', `/api/organizations/${orgId}/members`, { userId: newcomer.userId, role: 'superuser' }, founder.apiKey, '400 VALIDATION_ERROR role'],
      // Customers join by invitation only: add takes owner, admin or member.
      ['add: customer role', 'POST', `/api/organizations/${orgId}/members`, { userId: newcomer.userId, role: 'customer' }, founder.apiKey, '400 VALIDATION_ERROR role'],
      ['add: no role', 'POST', `/api/organizations/${orgId}/members`, { userId: newcomer.userId }, founder.apiKey, '400 VALIDATION_ERROR role'],
      ['add: malformed userId', 'POST', `/api/organizations/${orgId}/members`, { userId: 'not-a-uuid', role: 'member' }, founder.apiKey, '400 VALIDATION_ERROR userId'],
      ['change: unknown role', 'PUT', `/api/organizations/${orgId}/members/${member.userId}`, { role: 'superuser' }, founder.apiKey, '400 VALIDATION_ERROR role'],
      ['change: no role', 'PUT', `/api/organizations/${orgId}/members/${member.userId}`, {}, founder.apiKey, '400 VALIDATION_ERROR role'],
      ['change: malformed userId', 'PUT', `/api/organizations/${orgId}/members/not-a-uuid`, { role: 'admin' }, founder.apiKey, '400 VALIDATION_ERROR userId'],
      ['remove: malformed userId', 'DELETE', `/api/organizations/${orgId}/members/not-a-uuid`, undefined, founder.apiKey, '400 VALIDATION_ERROR userId'],
      ['a member raising their own role', 'PUT', `/api/organizations/${orgId}/members/${member.userId}`, { role: 'admin' }, member.apiKey, '403 FORBIDDEN'],
      ['a member raising their own role to owner', 'PUT', `/api/organizations/${orgId}/members/${member.userId}`, { role: 'owner' }, member.apiKey, '403 FORBIDDEN'],
    ];
    const outcomes: Record<string, string> = {};
    const expected: Record<string, string> = {};
    for (const [label, method, path, body, apiKey, want] of attempts) {
      const response = await call(app.url, path, { method, apiKey, ...(body !== undefined ? { body } : {}) });
      const fields = (response.body.error?.details?.issues ?? []).map((i: { field: string }) => i.field).join(',');
      outcomes[label] = `${response.status} ${response.body.error?.code ?? ''}${fields ? ` ${fields}` : ''}`;
      expected[label] = want;
    }
    expect(outcomes).toEqual(expected);
    expect(await snapshot()).toEqual(before);
  });
});

describe('removing or demoting a member', () => {
  it('takes away at once what the membership granted, even to a session token issued before', async () => {
    const orgId = founder.organizationId;
    const project = await call(app.url, '/api/projects', { apiKey: founder.apiKey, body: { name: 'Members only', organizationId: orgId } });
    expect(project.status, project.text).toBe(201);
    const projectId = project.body.data.id;
    const member = await signedInMember(orgId, 'member', 'Mira');
    const as = { headers: { authorization: member.authorization } };
    const reads = async () => ({
      organization: (await call(app.url, `/api/organizations/${orgId}`, as)).status,
      project: (await call(app.url, `/api/projects/${projectId}`, as)).status,
      listed: ((await call(app.url, '/api/projects?limit=200', as)).body.data?.projects ?? []).some((p: { id: string }) => p.id === projectId),
      organizations: ((await call(app.url, '/api/organizations', as)).body.data?.organizations ?? []).map((o: { id: string }) => o.id),
    });
    expect(await reads()).toEqual({ organization: 200, project: 200, listed: true, organizations: [orgId] });

    const removed = await call(app.url, `/api/organizations/${orgId}/members/${member.userId}`, { method: 'DELETE', apiKey: founder.apiKey });
    expect(removed.status, removed.text).toBe(200);
    expect(await reads()).toEqual({ organization: 403, project: 404, listed: false, organizations: [] });
    expect((await call(app.url, `/api/projects/${projectId}`, { method: 'PATCH', ...as, body: { name: 'Still here?' } })).status).toBe(404);
    expect((await sql('select name from projects where id = $1', [projectId]))[0].name).toBe('Members only');
  });

  it('to member takes away the admin powers at once', async () => {
    const orgId = founder.organizationId;
    const admin = await createUserInTenant(app, sql, founder.tenantId, 'Adam');
    expect((await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: founder.apiKey, body: { userId: admin.userId, role: 'admin' } })).status).toBe(201);
    const asAdmin = async () => ({
      update: (await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: admin.apiKey, body: { displayName: 'By the admin' } })).status,
      invite: (await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey, body: { organizationId: orgId, email: `adam-${Date.now()}@audit.test` } })).status,
      invitations: (await call(app.url, `/api/customer-invitations?organizationId=${orgId}`, { apiKey: admin.apiKey })).status,
    });
    expect(await asAdmin()).toEqual({ update: 200, invite: 201, invitations: 200 });
    expect((await call(app.url, `/api/organizations/${orgId}/members/${admin.userId}`, { method: 'PUT', apiKey: founder.apiKey, body: { role: 'member' } })).status).toBe(200);
    const invitationsBefore = await countRows(app.database.ownerUrl, 'customer_invitations');
    expect(await asAdmin()).toEqual({ update: 403, invite: 403, invitations: 403 });
    expect(await countRows(app.database.ownerUrl, 'customer_invitations')).toBe(invitationsBefore);
  });
});
