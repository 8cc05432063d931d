import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { tableSnapshot } from '../helpers/table-snapshot.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createUserInTenant, ownerOfAnotherOrganization, type Actor } from '../helpers/tenant-fixtures.ts';

/**
 * The isolation matrix calls every id route with a user of the tenant who belongs to no
 * organization. A user who holds the highest role in ANOTHER organization of the same tenant must
 * meet the same wall: an owner's standing must never be read as "an owner somewhere". Each call is
 * the one that would do harm: adding themselves as owner, promoting themselves, renaming, deleting.
 */
let app: TestApp;
let eve: Actor;
const ids: Record<string, string> = {};
const sql = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);

beforeAll(async () => {
  app = await startTestApp();
  const { tenantId, organizationId, apiKey, userId } = app.bootstrap;
  const member = await createUserInTenant(app, sql, tenantId, 'Mel');
  expect((await call(app.url, `/api/organizations/${organizationId}/members`, { apiKey, body: { userId: member.userId, role: 'member' } })).status).toBe(201);
  const customer = await createUserInTenant(app, sql, tenantId, 'Cy');
  await sql(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [tenantId, organizationId, customer.userId]);
  const project = await call(app.url, '/api/projects', { apiKey, body: { name: 'Victim', organizationId } });
  const assignment = await call(app.url, '/api/agency-projects', { apiKey, body: { organizationId, projectId: project.body.data.id, customerUserId: customer.userId } });
  expect(assignment.status, assignment.text).toBe(201);
  const invitation = await call(app.url, '/api/customer-invitations', { apiKey, body: { organizationId, email: 'pending@victim.test' } });
  expect(invitation.status, invitation.text).toBe(201);
  const [key] = await sql('select id from api_keys where user_id = $1', [userId]);
  Object.assign(ids, {
    organizationId,
    memberId: member.userId,
    customerId: customer.userId,
    projectId: project.body.data.id,
    assignmentId: assignment.body.data.id,
    invitationId: invitation.body.data.id,
    invitationToken: invitation.body.data.token,
    keyId: key.id,
  });
  eve = await ownerOfAnotherOrganization(app, apiKey, 'Eve');
});
afterAll(() => app?.stop());

describe('the owner of another organization of the same tenant', () => {
  it('meets ORG_NOT_MEMBER on the organization, NOT_FOUND on its rows named by id, and changes nothing', async () => {
    const { organizationId: org, memberId, projectId, assignmentId, invitationId, invitationToken, keyId, customerId } = ids;
    const calls: Array<[string, string, unknown, string]> = [
      ['GET', `/api/organizations/${org}`, undefined, '403 ORG_NOT_MEMBER'],
      ['PUT', `/api/organizations/${org}`, { name: 'Taken over' }, '403 ORG_NOT_MEMBER'],
      ['GET', `/api/organizations/${org}/members`, undefined, '403 ORG_NOT_MEMBER'],
      ['POST', `/api/organizations/${org}/members`, { userId: eve.userId, role: 'owner' }, '403 ORG_NOT_MEMBER'],
      ['PUT', `/api/organizations/${org}/members/${eve.userId}`, { role: 'owner' }, '403 ORG_NOT_MEMBER'],
      ['PUT', `/api/organizations/${org}/members/${memberId}`, { role: 'owner' }, '403 ORG_NOT_MEMBER'],
      ['DELETE', `/api/organizations/${org}/members/${memberId}`, undefined, '403 ORG_NOT_MEMBER'],
      ['GET', `/api/customer-invitations?organizationId=${org}`, undefined, '403 ORG_NOT_MEMBER'],
      ['POST', '/api/customer-invitations', { organizationId: org, email: 'planted@victim.test', roleId: 'member' }, '403 ORG_NOT_MEMBER'],
      ['POST', `/api/customer-invitations/${invitationId}/revoke`, {}, '404 NOT_FOUND'],
      ['POST', `/api/customer-invitations/${invitationToken}/revoke`, {}, '403 ORG_NOT_MEMBER'],
      ['GET', `/api/agency-projects?organizationId=${org}`, undefined, '403 ORG_NOT_MEMBER'],
      ['POST', '/api/agency-projects', { organizationId: org, projectId, customerUserId: customerId }, '403 ORG_NOT_MEMBER'],
      ['DELETE', `/api/agency-projects/${assignmentId}`, undefined, '404 NOT_FOUND'],
      ['POST', '/api/projects', { name: 'Planted', organizationId: org }, '403 ORG_NOT_MEMBER'],
      ['GET', `/api/projects/${projectId}`, undefined, '404 NOT_FOUND'],
      ['PATCH', `/api/projects/${projectId}`, { name: 'Taken over' }, '404 NOT_FOUND'],
      ['DELETE', `/api/projects/${projectId}`, undefined, '404 NOT_FOUND'],
      ['DELETE', `/api/developer/api-keys/${keyId}`, undefined, '404 NOT_FOUND'],
    ];
    const before = await tableSnapshot(app.database.ownerUrl);
    const got: string[] = [];
    for (const [method, path, body] of calls) {
      const response = await call(app.url, path, { method, apiKey: eve.apiKey, ...(body !== undefined ? { body } : {}) });
      got.push(`${method} ${path} → ${response.status} ${response.body?.error?.code ?? ''}`);
    }
    expect(got).toEqual(calls.map(([method, path, , want]) => `${method} ${path} → ${want}`));
    expect(await tableSnapshot(app.database.ownerUrl)).toEqual(before);
    // Nor does anything of the organization show in the lists Eve can read.
    const projects = (await call(app.url, '/api/projects?limit=200', { apiKey: eve.apiKey })).body.data.projects.map((p: { id: string }) => p.id);
    const organizations = (await call(app.url, '/api/organizations?limit=200', { apiKey: eve.apiKey })).body.data.organizations.map((o: { id: string }) => o.id);
    expect([projects.includes(projectId), organizations.includes(org)]).toEqual([false, false]);
  });
});
