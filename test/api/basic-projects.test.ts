import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLINIC_ANSWERS_BY_PHASE, flowWalker } from '../helpers/flow-walk.ts';
import { basicSurface } from '../helpers/basic-surface.ts';
import { call, type ApiResponse, type RequestOptions } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Variant A's projects (DESIGN §5.1, §5.2) over HTTP: bare bodies, the list wrapper, 201 and 204,
 * the bare error shape for every refusal, and every answer held to /api/basic/openapi.json.
 */

let app: TestApp;
let key: string;
let document: any;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
  ({ document, basic } = await basicSurface(app, key));
});
afterAll(() => app?.stop());

let basic: (method: string, template: string, path: string, options?: RequestOptions) => Promise<ApiResponse>;

const create = async (body: Record<string, unknown>) => {
  const response = await basic('POST', '/projects', '/projects', { body });
  expect(response.status, response.text).toBe(201);
  return response.body;
};

describe('the surface', () => {
  it('answers bare bodies: a project is its fields, with no envelope', async () => {
    const id = crypto.randomUUID();
    const project = await create({ id, name: 'Bare clinic', description: 'Bookings' });
    expect(project).toEqual({ id, name: 'Bare clinic', description: 'Bookings', status: 'draft', createdAt: expect.any(String), updatedAt: expect.any(String) });
    const [row] = await sqlAsOwner('select tenant_id, phase, status from projects where id = $1', [id]);
    expect(row).toEqual({ tenant_id: app.bootstrap.tenantId, phase: 'CREATED', status: 'active' });
    // Variant B sees the same project in its envelope.
    const seenByB = await call(app.url, `/api/projects/${id}`, { apiKey: key });
    expect([seenByB.status, seenByB.body.success, seenByB.body.data.name]).toEqual([200, true, 'Bare clinic']);
  });

  it('refuses in the bare error shape, before and inside the procedure', async () => {
    const noKey = await call(app.url, '/api/basic/projects');
    expect([noKey.status, Object.keys(noKey.body).sort(), noKey.body.code]).toEqual([401, ['code', 'message'], 'UNAUTHORIZED']);
    const unknownPath = await call(app.url, '/api/basic/nothing-here', { apiKey: key });
    expect([unknownPath.status, unknownPath.body.code, unknownPath.body.success]).toEqual([404, 'NOT_FOUND', undefined]);
    // The surface's root names the path asked, as it was asked.
    expect((await call(app.url, '/api/basic', { apiKey: key })).body).toEqual({ code: 'NOT_FOUND', message: 'No route for GET /api/basic' });
    expect((await call(app.url, '/api/basic/', { apiKey: key })).body).toEqual({ code: 'NOT_FOUND', message: 'No route for GET /api/basic/' });
    const wrongMethod = await call(app.url, `/api/basic/projects/${crypto.randomUUID()}`, { method: 'POST', apiKey: key, body: {} });
    expect([wrongMethod.status, wrongMethod.headers.get('allow'), wrongMethod.body.code]).toEqual([405, 'DELETE, GET, HEAD, PATCH, PUT', 'METHOD_NOT_ALLOWED']);
    const text = await call(app.url, '/api/basic/projects', { apiKey: key, rawBody: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect([text.status, text.body.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const before = await countRows(app.database.ownerUrl, 'projects');
    const invalid = await basic('POST', '/projects', '/projects', { body: { name: '', phase: 'SPECIFICATION' } });
    expect([invalid.status, invalid.body.code, invalid.body.details.issues.map((issue: { field: string }) => issue.field).sort()]).toEqual([400, 'VALIDATION_ERROR', ['name', 'phase']]);
    expect(invalid.headers.get('x-request-id')).toBeTruthy();
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(before);
  });

  it('has a document of its own, bare bodies and statuses as sent; /api keeps its envelope document', async () => {
    expect(document.info.title).toBe('Specwright API (Variant A)');
    expect(Object.keys(document.paths).sort()).toEqual(['/kits', '/kits/{id}', '/projects', '/projects/{id}', '/userstories', '/userstories/{id}']);
    expect(Object.keys(document.paths['/projects/{id}']).sort()).toEqual(['delete', 'get', 'patch', 'put']);
    expect(document.paths['/projects'].post.responses['201'].content['application/json'].schema.properties.status.enum).toEqual(['draft', 'discovery', 'planning', 'specification', 'complete']);
    expect(document.paths['/projects/{id}'].delete.responses['204'].content).toBeUndefined();
    expect(document.paths['/projects/{id}'].get.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(document.components.schemas.Error.required).toEqual(['code', 'message']);
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeTruthy();
    const docsInit = await (await fetch(`${app.url}/docs/swagger-ui-init.js`)).text();
    expect([docsInit.includes('/api/openapi.json'), docsInit.includes('/api/basic/openapi.json')]).toEqual([true, true]);
    const envelopeDocument = (await call(app.url, '/api/openapi.json')).body;
    expect(envelopeDocument.paths['/basic/projects']).toBeUndefined();
    expect(envelopeDocument.components.schemas.ErrorEnvelope).toBeDefined();
  });
});

describe('create', () => {
  it('makes up an id when none is sent, and refuses a taken one with CONFLICT, writing nothing', async () => {
    const made = await create({ name: 'No id given' });
    expect(made.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(made.description).toBeUndefined();
    const before = await countRows(app.database.ownerUrl, 'projects');
    const taken = await basic('POST', '/projects', '/projects', { body: { id: made.id.toUpperCase(), name: 'Same id' } });
    expect([taken.status, taken.body.code]).toEqual([409, 'CONFLICT']);
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(before);
    expect((await sqlAsOwner('select name from projects where id = $1', [made.id]))[0].name).toBe('No id given');
  });

  it('takes the read-only timestamps an answer carries, and ignores them', async () => {
    const made = await create({ name: 'Sent back', createdAt: '2001-01-01T00:00:00.000Z', updatedAt: '2001-01-01T00:00:00.000Z' });
    expect(made.createdAt.startsWith('2001')).toBe(false);
  });

  it('moves a project made at a status of a later group into that group', async () => {
    const made = await create({ name: 'Starts in discovery', status: 'discovery' });
    expect(made.status).toBe('discovery');
    const [row] = await sqlAsOwner('select phase, discovery_started_at is not null as started, (select count(*)::int from flow_questions where project_id = $1) as questions from projects where id = $1', [made.id]);
    expect(row).toMatchObject({ phase: 'DISCOVERY', started: true });
    expect(row.questions).toBeGreaterThan(0);
  });
});

describe('create by a caller of no organization', () => {
  it('is FORBIDDEN, not a VALIDATION_ERROR about organizationId (a field A does not take), and writes nothing', async () => {
    const customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Customer who creates');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, app.bootstrap.organizationId, customer.userId]);
    const loner = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'In no organization');
    const before = await countRows(app.database.ownerUrl, 'projects');
    for (const caller of [customer, loner]) {
      const refused = await call(app.url, '/api/basic/projects', { apiKey: caller.apiKey, body: { name: 'Mine', status: 'discovery' } });
      expect([refused.status, refused.body.code, refused.body.details]).toEqual([403, 'FORBIDDEN', undefined]);
      // The field the refusal would name is not one A takes.
      const withField = await call(app.url, '/api/basic/projects', { apiKey: caller.apiKey, body: { name: 'Mine', organizationId: app.bootstrap.organizationId } });
      expect([withField.status, withField.body.details.issues]).toEqual([400, [{ field: 'organizationId', issue: 'is not a field that can be set here' }]]);
    }
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(before);
  });
});

describe('list', () => {
  it('pages, sorts and orders, ties broken by id, in the list wrapper', async () => {
    const other = await createTenant(app, 'Listing');
    const names = ['Alpha list', 'Beta list', 'Gamma list'];
    for (const name of names) {
      const response = await call(app.url, '/api/basic/projects', { apiKey: other.apiKey, body: { name } });
      expect(response.status, response.text).toBe(201);
    }
    const list = (query: string) => call(app.url, `/api/basic/projects${query}`, { apiKey: other.apiKey });
    const first = await list('?sort=name&order=desc&pageSize=2');
    expect([first.status, first.body.items.map((project: { name: string }) => project.name), first.body.total, first.body.page, first.body.pageSize]).toEqual([200, ['Gamma list', 'Beta list'], 3, 1, 2]);
    const second = await list('?sort=name&order=desc&pageSize=2&page=2');
    expect(second.body.items.map((project: { name: string }) => project.name)).toEqual(['Alpha list']);
    const byDefault = await list('');
    expect([byDefault.body.items.map((project: { name: string }) => project.name), byDefault.body.pageSize]).toEqual([names, 20]);
    // The caller's tenant only: the bootstrap tenant's projects are not among them.
    expect(byDefault.body.total).toBe(3);
  });

  it('refuses paging it cannot take, by parameter', async () => {
    for (const query of ['?pageSize=0', '?pageSize=101', '?page=0', '?sort=phase', '?order=up', '?limit=5']) {
      const response = await basic('GET', '/projects', `/projects${query}`);
      expect([response.status, response.body.code], query).toEqual([400, 'VALIDATION_ERROR']);
    }
  });
});

describe('get, replace, change and delete', () => {
  it('answers NOT_FOUND for an unknown id and for another tenant’s project, changing nothing', async () => {
    const project = await create({ name: 'Mine only', description: 'kept' });
    const stranger = await createTenant(app, 'Stranger');
    for (const [method, body] of [['GET', undefined], ['PUT', { name: 'Taken over' }], ['PATCH', { name: 'Taken over' }], ['DELETE', undefined]] as const) {
      const theirs = await call(app.url, `/api/basic/projects/${project.id}`, { method, apiKey: stranger.apiKey, ...(body ? { body } : {}) });
      expect([theirs.status, theirs.body.code], method).toEqual([404, 'NOT_FOUND']);
      const unknown = await basic(method, '/projects/{id}', `/projects/${crypto.randomUUID()}`, body ? { body } : {});
      expect([unknown.status, unknown.body.code], method).toEqual([404, 'NOT_FOUND']);
    }
    expect((await basic('GET', '/projects/{id}', `/projects/${project.id}`)).body).toEqual(project);
  });

  it('PUT takes an answer sent back with its id, replaces name and description, and refuses another id', async () => {
    const project = await create({ name: 'To replace', description: 'goes away' });
    const replaced = await basic('PUT', '/projects/{id}', `/projects/${project.id}`, { body: { ...project, name: 'Replaced', description: undefined } });
    expect([replaced.status, replaced.body.name, replaced.body.description, replaced.body.status]).toEqual([200, 'Replaced', undefined, 'draft']);
    expect((await sqlAsOwner('select description from projects where id = $1', [project.id]))[0].description).toBeNull();
    const otherId = await basic('PUT', '/projects/{id}', `/projects/${project.id}`, { body: { id: crypto.randomUUID(), name: 'Hijack' } });
    expect([otherId.status, otherId.body.code, otherId.body.details.issues]).toEqual([400, 'VALIDATION_ERROR', [{ field: 'id', issue: 'must be the id in the path' }]]);
    const missingName = await basic('PUT', '/projects/{id}', `/projects/${project.id}`, { body: { description: 'no name' } });
    expect([missingName.status, missingName.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect((await sqlAsOwner('select name from projects where id = $1', [project.id]))[0].name).toBe('Replaced');
  });

  it('PATCH changes the fields sent; none changes nothing, updatedAt included', async () => {
    const project = await create({ name: 'To patch', description: 'stays' });
    const patched = await basic('PATCH', '/projects/{id}', `/projects/${project.id}`, { body: { name: 'Patched' } });
    expect([patched.body.name, patched.body.description]).toEqual(['Patched', 'stays']);
    const untouched = await basic('PATCH', '/projects/{id}', `/projects/${project.id}`, { body: {} });
    expect(untouched.body).toEqual(patched.body);
  });

  it('DELETE answers 204 with no body and removes the project; again it is NOT_FOUND', async () => {
    const project = await create({ name: 'To delete' });
    const deleted = await basic('DELETE', '/projects/{id}', `/projects/${project.id}`);
    expect([deleted.status, deleted.text]).toEqual([204, '']);
    expect(await sqlAsOwner('select id from projects where id = $1', [project.id])).toEqual([]);
    expect((await basic('DELETE', '/projects/{id}', `/projects/${project.id}`)).status).toBe(404);
  });
});

describe('status', () => {
  const walker = () => flowWalker(app, key, app.bootstrap.organizationId);

  it('reads the status from the phase, group by group', async () => {
    const projectId = await walker().finishedProject('Walked through');
    expect((await basic('GET', '/projects/{id}', `/projects/${projectId}`)).body.status).toBe('specification');
    await sqlAsOwner(`update projects set phase = 'VISUAL_DISCOVERY' where id = $1`, [projectId]);
    expect((await basic('GET', '/projects/{id}', `/projects/${projectId}`)).body.status).toBe('planning');
    await sqlAsOwner(`update projects set phase = 'FEATURE_SELECTION' where id = $1`, [projectId]);
    expect((await basic('GET', '/projects/{id}', `/projects/${projectId}`)).body.status).toBe('discovery');
  });

  it('moves the flow forward by its own rules: a phase not ready is READINESS_FAILED and nothing changes', async () => {
    const project = await create({ name: 'Not ready', description: 'first' });
    const tooFar = await basic('PATCH', '/projects/{id}', `/projects/${project.id}`, { body: { name: 'Renamed', status: 'planning' } });
    expect([tooFar.status, tooFar.body.code]).toEqual([400, 'READINESS_FAILED']);
    const [row] = await sqlAsOwner('select name, phase, (select count(*)::int from flow_questions where project_id = $1) as questions from projects where id = $1', [project.id]);
    expect(row).toEqual({ name: 'Not ready', phase: 'CREATED', questions: 0 });
  });

  it('moves through every phase a ready flow allows, up to the first of the group named', async () => {
    const flow = walker();
    const { projectId } = await flow.startedProject('Ready to plan', 'Online booking for small clinics');
    await flow.answerPhase(projectId, CLINIC_ANSWERS_BY_PHASE[0]![1]);
    // Discovery is answered; feature selection is not, so planning is still out of reach.
    const early = await basic('PATCH', '/projects/{id}', `/projects/${projectId}`, { body: { status: 'planning' } });
    expect([early.status, early.body.code]).toEqual([400, 'READINESS_FAILED']);
    expect((await sqlAsOwner('select phase from projects where id = $1', [projectId]))[0].phase).toBe('DISCOVERY');
    expect((await flow.post('/flow/transition', { projectId, targetPhase: 'FEATURE_SELECTION' })).status).toBe(200);
    await flow.answerPhase(projectId, CLINIC_ANSWERS_BY_PHASE[1]![1]);
    const planned = await basic('PATCH', '/projects/{id}', `/projects/${projectId}`, { body: { status: 'planning' } });
    expect([planned.status, planned.body.status]).toEqual([200, 'planning']);
    expect((await sqlAsOwner('select phase from projects where id = $1', [projectId]))[0].phase).toBe('PLAN_GENERATION');
    // The status it has already changes nothing; a phase never moves back.
    const same = await basic('PUT', '/projects/{id}', `/projects/${projectId}`, { body: { name: 'Ready to plan', description: 'Online booking for small clinics', status: 'planning' } });
    expect([same.status, same.body.updatedAt]).toEqual([200, planned.body.updatedAt]);
    const back = await basic('PATCH', '/projects/{id}', `/projects/${projectId}`, { body: { status: 'draft' } });
    expect([back.status, back.body.code, back.body.details]).toEqual([400, 'PHASE_INVALID', { currentStatus: 'planning', currentPhase: 'PLAN_GENERATION' }]);
  });

  it('completes from specification, and opens again when specification is written', async () => {
    const notYet = await create({ name: 'Not finished' });
    const early = await basic('PATCH', '/projects/{id}', `/projects/${notYet.id}`, { body: { status: 'complete' } });
    expect([early.status, early.body.code]).toEqual([400, 'PHASE_INVALID']);
    const projectId = await walker().finishedProject('Finished');
    const completed = await basic('PATCH', '/projects/{id}', `/projects/${projectId}`, { body: { status: 'complete' } });
    expect([completed.status, completed.body.status]).toEqual([200, 'complete']);
    expect((await sqlAsOwner('select status from projects where id = $1', [projectId]))[0].status).toBe('completed');
    const reopened = await basic('PATCH', '/projects/{id}', `/projects/${projectId}`, { body: { status: 'specification' } });
    expect([reopened.status, reopened.body.status]).toEqual([200, 'specification']);
    expect((await sqlAsOwner('select status, phase from projects where id = $1', [projectId]))[0]).toEqual({ status: 'active', phase: 'SPECIFICATION' });
  });

  it('is not moved by a customer, who does not move flows', async () => {
    const customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Customer');
    const project = await create({ name: 'Assigned' });
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, app.bootstrap.organizationId, customer.userId]);
    await sqlAsOwner('insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)', [app.bootstrap.tenantId, app.bootstrap.organizationId, project.id, customer.userId]);
    const seen = await call(app.url, `/api/basic/projects/${project.id}`, { apiKey: customer.apiKey });
    expect([seen.status, seen.body.name]).toEqual([200, 'Assigned']);
    const moved = await call(app.url, `/api/basic/projects/${project.id}`, { method: 'PATCH', apiKey: customer.apiKey, body: { status: 'discovery' } });
    expect([moved.status, moved.body.code]).toEqual([403, 'FORBIDDEN']);
    expect((await sqlAsOwner('select phase from projects where id = $1', [project.id]))[0].phase).toBe('CREATED');
  });
});
