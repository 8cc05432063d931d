import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { tableSnapshot } from '../helpers/table-snapshot.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';
import { sampleExecutionBody, sampleKit } from '../helpers/kit-fixtures.ts';

/**
 * Every REST route that takes an id, called with the ids of one tenant by (a) the owner of another
 * tenant and (b) a user of the same tenant who is not a member of the organization. The routes come
 * from the OpenAPI document, so a new route is covered the day it is added (or fails here until
 * this file knows how to fill its path).
 */
let app: TestApp;
let victim: { tenantId: string; organizationId: string; ownerKey: string; ids: Record<string, string> };
let foreigner: Actor & { tenantId: string };
let nonMember: Actor;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

const snapshot = () => tableSnapshot(app.database.ownerUrl);

/** A body that passes validation, so the answer is about access, not input. */
const bodies: Record<string, unknown> = {
  'PUT /organizations/{id}': { name: 'Taken over' },
  'POST /organizations/{id}/members': { userId: '00000000-0000-4000-8000-000000000000', role: 'member' },
  'PUT /organizations/{id}/members/{userId}': { role: 'admin' },
  'PATCH /projects/{projectId}': { name: 'Taken over' },
  'PATCH /admin/tenants/{tenantId}/features': { kits_enabled: false },
  'PATCH /{orgId}/kits/{kitId}': { status: 'deprecated' },
  'POST /{orgId}/kits': sampleKit({ id: 'planted' }),
  'POST /{orgId}/kits/{kitId}/execute': sampleExecutionBody('00000000-0000-4000-8000-000000000000'),
  'POST /{orgId}/kits/credentials': { projectId: '00000000-0000-4000-8000-000000000000', kitId: 'service-starter', credentialType: 'token', credentials: { token: 'x' } },
};

function fillPath(path: string): string | undefined {
  // A token is a bearer-style secret, not a guessable id; revoke also takes the invitation's id.
  if (path.includes('{token}') && !path.endsWith('/revoke')) return undefined;
  return path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const key =
      name === 'id' ? (path.startsWith('/agency-projects') ? 'assignmentId' : 'organizationId')
      : name === 'orgId' ? 'organizationId'
      : name === 'token' ? 'invitationId'
      : name === 'executionId' && path.startsWith('/agents/') ? 'agentExecutionId'
      : name;
    const value = victim.ids[key];
    if (!value) throw new Error(`isolation matrix: no victim id for {${name}} in ${path}; teach fillPath`);
    return value;
  });
}

beforeAll(async () => {
  app = await startTestApp();
  const owner = app.bootstrap;
  const member = await createUserInTenant(app, sqlAsOwner, owner.tenantId, 'Mia');
  await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`, [owner.tenantId, owner.organizationId, member.userId]);
  const customer = await createUserInTenant(app, sqlAsOwner, owner.tenantId, 'Cal');
  await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [owner.tenantId, owner.organizationId, customer.userId]);
  const project = await call(app.url, '/api/projects', { apiKey: owner.apiKey, body: { name: 'Victim', organizationId: owner.organizationId } });
  const [assignment] = await sqlAsOwner(
    'insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4) returning id',
    [owner.tenantId, owner.organizationId, project.body.data.id, customer.userId],
  );
  const [key] = await sqlAsOwner('select id from api_keys where user_id = $1', [owner.userId]);
  const kit = sampleKit({ credentials: [{ id: 'token', description: 'A token', required: false }] });
  expect((await call(app.url, `/api/${owner.organizationId}/kits`, { apiKey: owner.apiKey, body: kit })).status).toBe(201);
  const execution = await call(app.url, `/api/${owner.organizationId}/kits/service-starter/execute`, { apiKey: owner.apiKey, body: sampleExecutionBody(project.body.data.id) });
  const credential = await call(app.url, `/api/${owner.organizationId}/kits/credentials`, {
    apiKey: owner.apiKey,
    body: { projectId: project.body.data.id, kitId: 'service-starter', credentialType: 'token', credentials: { token: 'victim-secret' } },
  });
  const invitation = await call(app.url, '/api/customer-invitations', { apiKey: owner.apiKey, body: { organizationId: owner.organizationId, email: 'pending@victim.test' } });
  expect(invitation.status).toBe(201);
  // The project's flow is under way, so its questions have ids to aim at.
  const flow = await call(app.url, '/api/flow/start', { apiKey: owner.apiKey, body: { projectId: project.body.data.id } });
  expect(flow.status, flow.text).toBe(200);
  const specification = await call(app.url, '/api/specification/compile', { apiKey: owner.apiKey, body: { projectId: project.body.data.id } });
  expect(specification.status, specification.text).toBe(202);
  // An agent execution that failed (no worker runs here, so it is failed by hand), with a checkpoint to resume from.
  const agents = await call(app.url, '/api/agents/generate-spec', { apiKey: owner.apiKey, body: { projectId: project.body.data.id } });
  expect(agents.status, agents.text).toBe(202);
  const checkpoint = '11111111-1111-4111-8111-111111111111';
  await sqlAsOwner(`update agent_executions set status = 'failed', error_code = 'budget_exceeded', error_message = 'x', checkpoint = $2 where id = $1`, [agents.body.data.executionId, checkpoint]);
  bodies['POST /agents/execution/{executionId}/resume'] = { checkpoint };
  const task = await call(app.url, '/api/tasks', {
    apiKey: owner.apiKey,
    body: { projectId: project.body.data.id, type: 'DECIDE', title: 'Victim task', description: 'd', actions: [{ type: 'SINGLE_SELECT', label: 'Pick', config: { options: [{ value: 'a', label: 'A' }] } }] },
  });
  expect(task.status, task.text).toBe(201);
  bodies['POST /tasks/{taskId}/actions/{actionId}'] = { data: { value: 'a' } };
  victim = {
    tenantId: owner.tenantId,
    organizationId: owner.organizationId,
    ownerKey: owner.apiKey,
    ids: {
      organizationId: owner.organizationId,
      tenantId: owner.tenantId,
      userId: member.userId,
      projectId: project.body.data.id,
      keyId: key.id,
      assignmentId: assignment.id,
      kitId: 'service-starter',
      executionId: execution.body.data.executionId,
      outputId: 'openapi',
      credentialId: credential.body.data.credentialId,
      invitationId: invitation.body.data.id,
      customerUserId: customer.userId,
      questionId: flow.body.data.firstQuestion.id,
      specId: specification.body.data.specId,
      agentExecutionId: agents.body.data.executionId,
      taskId: task.body.data.id,
      actionId: 'a1',
    },
  };
  foreigner = await createTenant(app, 'Foreign');
  // With kits on in its own tenant, the foreigner gets past the flag and meets the isolation itself.
  await call(app.url, `/api/admin/tenants/${foreigner.tenantId}/features`, { method: 'PATCH', apiKey: owner.apiKey, body: { kits_enabled: true } });
  nonMember = await createUserInTenant(app, sqlAsOwner, owner.tenantId, 'Nadia');
});
afterAll(() => app?.stop());

async function routesWithIds(): Promise<Array<{ method: string; path: string }>> {
  const { body: document } = await call(app.url, '/api/openapi.json');
  return Object.entries(document.paths as Record<string, Record<string, unknown>>)
    .filter(([path]) => path.includes('{'))
    .flatMap(([path, operations]) => Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })));
}

/** Routes that take the victim's ids in the query or the body rather than the path. */
function callsWithIdsOutsideThePath(): Array<{ label: string; path: string; method: string; body?: unknown }> {
  const { organizationId, projectId, customerUserId } = victim.ids;
  return [
    { label: 'GET /customer-invitations?organizationId', method: 'GET', path: `/api/customer-invitations?organizationId=${organizationId}` },
    { label: 'POST /customer-invitations', method: 'POST', path: '/api/customer-invitations', body: { organizationId, email: 'planted@victim.test' } },
    { label: 'GET /agency-projects?organizationId', method: 'GET', path: `/api/agency-projects?organizationId=${organizationId}` },
    { label: 'POST /agency-projects', method: 'POST', path: '/api/agency-projects', body: { organizationId, projectId, customerUserId } },
    { label: 'POST /projects {organizationId}', method: 'POST', path: '/api/projects', body: { name: 'Planted', organizationId } },
  ];
}

/** The flow's routes that take the victim's project (and question) in the body. */
function flowCallsWithIdsInTheBody(): Array<{ label: string; body: Record<string, unknown> }> {
  const { projectId, questionId } = victim.ids;
  return [
    { label: 'POST /flow/start', body: { projectId } },
    { label: 'POST /flow/get-next-question', body: { projectId } },
    { label: 'POST /flow/answer-question', body: { projectId, questionId, answer: { value: 'Planted answer' } } },
    { label: 'POST /flow/transition', body: { projectId, targetPhase: 'FEATURE_SELECTION' } },
    { label: 'POST /flow/transition', body: { projectId, targetPhase: 'FEATURE_SELECTION', force: true } },
  ];
}

describe('tenant and organization isolation', () => {
  it('answers ids outside the path the same way: NOT_FOUND to another tenant, ORG_NOT_MEMBER to a non-member, and changes nothing', async () => {
    const before = await snapshot();
    const outcomes: string[] = [];
    for (const [caller, expected] of [[foreigner, '404 NOT_FOUND'], [nonMember, '403 ORG_NOT_MEMBER']] as const) {
      for (const { label, method, path, body } of callsWithIdsOutsideThePath()) {
        const response = await call(app.url, path, { method, apiKey: caller.apiKey, ...(body ? { body } : {}) });
        const got = `${response.status} ${response.body?.error?.code ?? ''}`;
        if (got !== expected) outcomes.push(`${caller === foreigner ? 'foreigner' : 'non-member'} ${label} → ${got}, expected ${expected}`);
      }
    }
    expect(outcomes).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it("answers the flow's routes NOT_FOUND, as the project's own, to another tenant and to a non-member, and changes nothing", async () => {
    const before = await snapshot();
    const outcomes: string[] = [];
    for (const caller of [foreigner, nonMember]) {
      for (const { label, body } of flowCallsWithIdsInTheBody()) {
        const response = await call(app.url, `/api${label.slice('POST '.length)}`, { apiKey: caller.apiKey, body });
        const got = `${response.status} ${response.body?.error?.code ?? ''}`;
        if (got !== '404 NOT_FOUND') outcomes.push(`${caller === foreigner ? 'foreigner' : 'non-member'} ${label} ${JSON.stringify(body)} → ${got}, expected 404 NOT_FOUND`);
      }
    }
    expect(outcomes).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('answers another tenant NOT_FOUND on every id route and changes nothing', async () => {
    const before = await snapshot();
    const routes = await routesWithIds();
    expect(routes.length).toBeGreaterThanOrEqual(10);
    const outcomes: string[] = [];
    for (const { method, path } of routes) {
      const filled = fillPath(path);
      if (!filled) continue;
      const response = await call(app.url, `/api${filled}`, { method, apiKey: foreigner.apiKey, ...(bodies[`${method} ${path}`] ? { body: bodies[`${method} ${path}`] } : {}) });
      outcomes.push(`${method} ${path} → ${response.status} ${response.body?.error?.code ?? ''}`.trim());
    }
    // Platform-admin routes refuse before looking anything up; everything else is NOT_FOUND.
    expect(outcomes.filter((line) => !(/^[A-Z]+ \/admin\//.test(line) ? line.endsWith('403 FORBIDDEN') : line.endsWith('404 NOT_FOUND')))).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it("answers a non-member ORG_NOT_MEMBER on organization routes, NOT_FOUND on the organization's projects, on its rows named by id alone (assignments, invitations) and on others' keys, and changes nothing", async () => {
    const before = await snapshot();
    const outcomes: string[] = [];
    for (const { method, path } of await routesWithIds()) {
      const filled = fillPath(path);
      if (!filled) continue;
      const response = await call(app.url, `/api${filled}`, { method, apiKey: nonMember.apiKey, ...(bodies[`${method} ${path}`] ? { body: bodies[`${method} ${path}`] } : {}) });
      const expected =
        path.startsWith('/organizations/') || path.startsWith('/{orgId}/')
          ? '403 ORG_NOT_MEMBER'
          : // A path naming only the row would otherwise tell a non-member that the id exists.
            path.startsWith('/developer/') || path.startsWith('/projects/') || path.startsWith('/flow/') || path.startsWith('/agency-projects/') || path.startsWith('/customer-invitations/') || path.startsWith('/specification/') || path.startsWith('/agents/') || path.startsWith('/tasks/')
            ? '404 NOT_FOUND'
            : path.startsWith('/admin/')
              ? '403 FORBIDDEN'
              : undefined;
      if (expected) outcomes.push(`${method} ${path} → ${response.status} ${response.body?.error?.code ?? ''}|${expected}`);
    }
    expect(outcomes.filter((line) => { const [got, want] = line.split('|'); return !got!.endsWith(want!); })).toEqual([]);
    expect(outcomes.some((line) => line.startsWith('POST /customer-invitations/{token}/revoke'))).toBe(true);
    expect(outcomes.length).toBeGreaterThanOrEqual(6);
    expect(await snapshot()).toEqual(before);
  });
});
