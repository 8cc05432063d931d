import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { whileTransactionHolds } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant, ownerOfAnotherOrganization, type Actor } from '../helpers/tenant-fixtures.ts';

const PASSWORD = 'customers have long passwords';
let app: TestApp;
let owner: Actor;
let admin: Actor;
let member: Actor;
let foreign: Actor & { tenantId: string; organizationId: string };
let orgId: string;
let customer: { userId: string; bearer: string };
let project: string;
let secondProject: string;
let otherOrgProject: string;
let foreignProject: string;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const assignmentCount = () => countRows(app.database.ownerUrl, 'agency_project_assignments');

async function createProject(apiKey: string, organizationId: string, name: string): Promise<string> {
  const response = await call(app.url, '/api/projects', { apiKey, body: { name, organizationId } });
  expect(response.status, response.text).toBe(201);
  return response.body.data.id;
}

/** A customer the way one really arrives: invited, accepted as a new user, signed in. */
async function inviteCustomer(name: string): Promise<{ userId: string; bearer: string }> {
  const email = `${name.toLowerCase()}-${Date.now()}@client.test`;
  const invitation = await call(app.url, '/api/customer-invitations', { apiKey: admin.apiKey, body: { organizationId: orgId, email } });
  expect(invitation.status, invitation.text).toBe(201);
  const accepted = await call(app.url, `/api/customer-invitations/${invitation.body.data.token}/accept`, { body: { name, password: PASSWORD } });
  expect(accepted.status, accepted.text).toBe(200);
  const login = await call(app.url, '/api/auth/login', { body: { email, password: PASSWORD } });
  return { userId: accepted.body.data.userId, bearer: `Bearer ${login.body.data.accessToken}` };
}

const visibleProjects = async (who: { bearer: string }) =>
  (await call(app.url, '/api/projects', { headers: { authorization: who.bearer } })).body.data.projects.map((p: { id: string }) => p.id);

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '1000' } });
  owner = { userId: app.bootstrap.userId, apiKey: app.bootstrap.apiKey, email: 'owner@specwright.local' };
  orgId = app.bootstrap.organizationId;
  admin = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Ada');
  member = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Max');
  for (const [actor, role] of [[admin, 'admin'], [member, 'member']] as const) {
    expect((await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: owner.apiKey, body: { userId: actor.userId, role } })).status).toBe(201);
  }
  customer = await inviteCustomer('Carla');
  project = await createProject(owner.apiKey, orgId, 'Website relaunch');
  secondProject = await createProject(owner.apiKey, orgId, 'Internal tooling');
  const otherOrg = await call(app.url, '/api/organizations', { apiKey: owner.apiKey, body: { name: 'Sister agency', slug: `sister-${Date.now()}` } });
  otherOrgProject = await createProject(owner.apiKey, otherOrg.body.data.id, 'Not ours');
  foreign = await createTenant(app, 'Foreign');
  foreignProject = await createProject(foreign.apiKey, foreign.organizationId, 'Foreign project');
});
afterAll(() => app?.stop());

describe('POST /api/agency-projects', () => {
  it("assigns an organization's project to its customer, who then sees that project and no other", async () => {
    expect(await visibleProjects(customer)).toEqual([]);
    const response = await call(app.url, '/api/agency-projects', { apiKey: admin.apiKey, body: { organizationId: orgId, projectId: project, customerUserId: customer.userId } });
    expect(response.status, response.text).toBe(201);
    expect(response.body.data).toEqual({ id: expect.any(String), organizationId: orgId, projectId: project, customerUserId: customer.userId, createdAt: expect.any(String) });
    const rows = await sqlAsOwner('select tenant_id, organization_id, project_id, customer_user_id from agency_project_assignments where id = $1', [response.body.data.id]);
    expect(rows).toEqual([{ tenant_id: app.bootstrap.tenantId, organization_id: orgId, project_id: project, customer_user_id: customer.userId }]);
    expect(await visibleProjects(customer)).toEqual([project]);

    const duplicate = await call(app.url, '/api/agency-projects', { apiKey: owner.apiKey, body: { organizationId: orgId, projectId: project, customerUserId: customer.userId } });
    expect([duplicate.status, duplicate.body.error.code]).toEqual([409, 'CONFLICT']);
  });

  it('refuses what does not fit — and changes nothing', async () => {
    const before = await assignmentCount();
    const stranger = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Stan');
    const attempt = (body: Record<string, unknown>, apiKey = admin.apiKey) =>
      call(app.url, '/api/agency-projects', { apiKey, body: { organizationId: orgId, projectId: secondProject, customerUserId: customer.userId, ...body } });
    const outcomes = {
      memberNotCustomer: await attempt({ customerUserId: member.userId }),
      notAMember: await attempt({ customerUserId: stranger.userId }),
      unknownUser: await attempt({ customerUserId: '00000000-0000-4000-8000-000000000000' }),
      foreignUser: await attempt({ customerUserId: foreign.userId }),
      otherOrganizationsProject: await attempt({ projectId: otherOrgProject }),
      unknownProject: await attempt({ projectId: '00000000-0000-4000-8000-000000000000' }),
      foreignProject: await attempt({ projectId: foreignProject }),
      foreignOrganization: await attempt({ organizationId: foreign.organizationId }),
      byMember: await attempt({}, member.apiKey),
      byForeigner: await attempt({}, foreign.apiKey),
      malformed: await attempt({ projectId: 'nope', extra: true }),
    };
    const summary = Object.fromEntries(Object.entries(outcomes).map(([name, r]) => [name, `${r.status} ${r.body.error?.code}`]));
    expect(summary).toEqual({
      memberNotCustomer: '400 VALIDATION_ERROR',
      notAMember: '400 VALIDATION_ERROR',
      unknownUser: '404 NOT_FOUND',
      foreignUser: '404 NOT_FOUND',
      otherOrganizationsProject: '404 NOT_FOUND',
      unknownProject: '404 NOT_FOUND',
      foreignProject: '404 NOT_FOUND',
      foreignOrganization: '404 NOT_FOUND',
      byMember: '403 FORBIDDEN',
      byForeigner: '404 NOT_FOUND',
      malformed: '400 VALIDATION_ERROR',
    });
    // Every VALIDATION_ERROR names its fields the same way (details.issues), whichever rule refused them.
    expect(outcomes.memberNotCustomer.body.error.details).toEqual({ issues: [{ field: 'customerUserId', issue: 'has the role member, not customer' }] });
    expect(outcomes.notAMember.body.error.details).toEqual({ issues: [{ field: 'customerUserId', issue: 'is not a member of the organization' }] });
    expect(outcomes.malformed.body.error.details.issues.map((i: { field: string }) => i.field).sort()).toEqual(['extra', 'projectId']);
    expect(await assignmentCount()).toBe(before);
  });
});

describe('POST /api/agency-projects with a project of another organization', () => {
  it('answers NOT_FOUND, as for an unknown id, to an admin who cannot see that project, and changes nothing', async () => {
    const before = await assignmentCount();
    const assign = (projectId: string, apiKey: string) =>
      call(app.url, '/api/agency-projects', { apiKey, body: { organizationId: orgId, projectId, customerUserId: customer.userId } });
    // Ada is an admin here and no member of the sister organization: its project is hidden from her.
    expect((await call(app.url, `/api/projects/${otherOrgProject}`, { apiKey: admin.apiKey })).status).toBe(404);
    const hidden = await assign(otherOrgProject, admin.apiKey);
    const unknown = await assign('00000000-0000-4000-8000-000000000000', admin.apiKey);
    expect([hidden.status, hidden.body.error]).toEqual([unknown.status, unknown.body.error]);
    expect([hidden.status, hidden.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    // The owner belongs to both organizations and sees the project: told why it cannot be assigned here.
    const seen = await assign(otherOrgProject, owner.apiKey);
    expect([seen.status, seen.body.error?.details]).toEqual([400, { issues: [{ field: 'projectId', issue: 'is a project of another organization' }] }]);
    expect(await assignmentCount()).toBe(before);
  });
});

describe('POST /api/projects by a customer', () => {
  it('creates nothing, and without organizationId the answer says which roles create projects', async () => {
    const before = await countRows(app.database.ownerUrl, 'projects');
    const unnamed = await call(app.url, '/api/projects', { headers: { authorization: customer.bearer }, body: { name: 'Mine' } });
    expect([unnamed.status, unnamed.body.error?.message]).toEqual([400, 'organizationId is required: you belong to no organization as its owner, an admin or a member']);
    const named = await call(app.url, '/api/projects', { headers: { authorization: customer.bearer }, body: { name: 'Mine', organizationId: orgId } });
    expect(named.status, named.text).toBe(403);
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(before);
  });
});

describe('promoting a customer', () => {
  it('removes their assignments: as a member they see what members see, and no assignment outlives the role', async () => {
    const promoted = await inviteCustomer('Paula');
    const assigned = await call(app.url, '/api/agency-projects', { apiKey: admin.apiKey, body: { organizationId: orgId, projectId: project, customerUserId: promoted.userId } });
    expect(assigned.status, assigned.text).toBe(201);
    const change = await call(app.url, `/api/organizations/${orgId}/members/${promoted.userId}`, { method: 'PUT', apiKey: admin.apiKey, body: { role: 'member' } });
    expect(change.status, change.text).toBe(200);
    expect(await sqlAsOwner('select id from agency_project_assignments where customer_user_id = $1', [promoted.userId])).toEqual([]);
    const listed = await call(app.url, `/api/agency-projects?organizationId=${orgId}&limit=200`, { apiKey: admin.apiKey });
    expect(listed.body.data.assignments.map((a: { customerUserId: string }) => a.customerUserId)).not.toContain(promoted.userId);
    expect(await visibleProjects(promoted)).toEqual(expect.arrayContaining([project, secondProject]));
  });
});

describe('POST /api/agency-projects while the project is being deleted', () => {
  it('answers NOT_FOUND, not a 500, and leaves no assignment behind', async () => {
    const doomed = await createProject(owner.apiKey, orgId, 'Doomed');
    const before = await assignmentCount();
    // Another request deletes the project; its transaction is still open when the assignment arrives.
    const response = await whileTransactionHolds(
      app.database.ownerUrl,
      async (holder) => {
        await holder.query('select id from projects where id = $1 for update', [doomed]);
        await holder.query('delete from projects where id = $1', [doomed]);
      },
      () => call(app.url, '/api/agency-projects', { apiKey: admin.apiKey, body: { organizationId: orgId, projectId: doomed, customerUserId: customer.userId } }),
    );
    expect([response.status, response.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    expect(await assignmentCount()).toBe(before);
  });
});

describe('GET /api/agency-projects', () => {
  it("lists the organization's assignments oldest first, with paging, for admins and owners only", async () => {
    const second = await call(app.url, '/api/agency-projects', { apiKey: owner.apiKey, body: { organizationId: orgId, projectId: secondProject, customerUserId: customer.userId } });
    expect(second.status).toBe(201);
    const listed = await call(app.url, `/api/agency-projects?organizationId=${orgId}`, { apiKey: admin.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(listed.body.data.assignments.map((a: { projectId: string }) => a.projectId)).toEqual([project, secondProject]);
    const page = await call(app.url, `/api/agency-projects?organizationId=${orgId}&limit=1&offset=1`, { apiKey: owner.apiKey });
    expect(page.body.data).toMatchObject({ total: 2, limit: 1, offset: 1, assignments: [{ id: second.body.data.id }] });

    const byMember = await call(app.url, `/api/agency-projects?organizationId=${orgId}`, { apiKey: member.apiKey });
    expect([byMember.status, byMember.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const byCustomer = await call(app.url, `/api/agency-projects?organizationId=${orgId}`, { headers: { authorization: customer.bearer } });
    expect([byCustomer.status, byCustomer.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const byForeigner = await call(app.url, `/api/agency-projects?organizationId=${orgId}`, { apiKey: foreign.apiKey });
    expect([byForeigner.status, byForeigner.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect((await call(app.url, '/api/agency-projects', { apiKey: admin.apiKey })).status).toBe(400);
  });
});

describe('DELETE /api/agency-projects/{id}', () => {
  it('removes an assignment (admins and owners), after which the customer no longer sees the project', async () => {
    const [row] = await sqlAsOwner('select id from agency_project_assignments where project_id = $1 and customer_user_id = $2', [project, customer.userId]);

    const byForeigner = await call(app.url, `/api/agency-projects/${row.id}`, { method: 'DELETE', apiKey: foreign.apiKey });
    expect([byForeigner.status, byForeigner.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const byMember = await call(app.url, `/api/agency-projects/${row.id}`, { method: 'DELETE', apiKey: member.apiKey });
    expect([byMember.status, byMember.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect(await sqlAsOwner('select id from agency_project_assignments where id = $1', [row.id])).toHaveLength(1);

    const response = await call(app.url, `/api/agency-projects/${row.id}`, { method: 'DELETE', apiKey: admin.apiKey });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ id: row.id, deleted: true });
    expect(await sqlAsOwner('select id from agency_project_assignments where id = $1', [row.id])).toEqual([]);
    expect(await visibleProjects(customer)).toEqual([secondProject]);

    const again = await call(app.url, `/api/agency-projects/${row.id}`, { method: 'DELETE', apiKey: admin.apiKey });
    expect([again.status, again.body.error.code]).toEqual([404, 'NOT_FOUND']);

    // Of several concurrent deletes of one assignment, one deletes it; the others find nothing.
    const assigned = await call(app.url, '/api/agency-projects', { apiKey: admin.apiKey, body: { projectId: project, customerUserId: customer.userId, organizationId: orgId } });
    expect(assigned.status, assigned.text).toBe(201);
    const racers = await Promise.all(Array.from({ length: 6 }, () => call(app.url, `/api/agency-projects/${assigned.body.data.id}`, { method: 'DELETE', apiKey: admin.apiKey })));
    expect(racers.map((r) => r.status).sort()).toEqual([200, 404, 404, 404, 404, 404]);
    expect((await call(app.url, '/api/agency-projects/not-a-uuid', { method: 'DELETE', apiKey: admin.apiKey })).status).toBe(400);
  });

  it('answers whoever may not remove an assignment as it answers an id that does not exist, and keeps the assignment', async () => {
    const cora = await inviteCustomer('Cora');
    const assigned = await call(app.url, '/api/agency-projects', { apiKey: admin.apiKey, body: { organizationId: orgId, projectId: project, customerUserId: cora.userId } });
    expect(assigned.status, assigned.text).toBe(201);
    const outsider = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Otto');
    const ownerElsewhere = await ownerOfAnotherOrganization(app, owner.apiKey, 'Elsa');

    const callers: Record<string, { apiKey?: string; headers?: Record<string, string> }> = {
      member: { apiKey: member.apiKey },
      customer: { headers: { authorization: cora.bearer } },
      'user of the tenant who is not a member': { apiKey: outsider.apiKey },
      'owner of another organization': { apiKey: ownerElsewhere.apiKey },
    };
    const remove = (id: string, as: { apiKey?: string; headers?: Record<string, string> }) => call(app.url, `/api/agency-projects/${id}`, { method: 'DELETE', ...as });
    for (const [who, as] of Object.entries(callers)) {
      const existing = await remove(assigned.body.data.id, as);
      const missing = await remove('00000000-0000-4000-8000-000000000000', as);
      expect([existing.status, existing.body.error], who).toEqual([missing.status, missing.body.error]);
      expect([existing.status, existing.body.error?.code], who).toEqual([404, 'NOT_FOUND']);
    }
    expect(await sqlAsOwner('select id from agency_project_assignments where id = $1', [assigned.body.data.id])).toHaveLength(1);
    expect((await remove(assigned.body.data.id, { apiKey: admin.apiKey })).status).toBe(200);
  });

  it('leaves no assignment behind when the customer is removed while one is being made', async () => {
    const leaving = await inviteCustomer('Lena');
    // An assignment in flight: it share-locks the membership, as assigning does, and is not committed yet.
    const removed = await whileTransactionHolds(
      app.database.ownerUrl,
      async (holder) => {
        await holder.query('select 1 from organization_members where organization_id = $1 and user_id = $2 for share', [orgId, leaving.userId]);
        await holder.query('insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)', [
          app.bootstrap.tenantId,
          orgId,
          project,
          leaving.userId,
        ]);
      },
      () => call(app.url, `/api/organizations/${orgId}/members/${leaving.userId}`, { method: 'DELETE', apiKey: admin.apiKey }),
    );
    expect(removed.status, removed.text).toBe(200);
    expect(await sqlAsOwner('select id from agency_project_assignments where customer_user_id = $1', [leaving.userId])).toEqual([]);
    expect(await visibleProjects(leaving)).toEqual([]);
  });
});
