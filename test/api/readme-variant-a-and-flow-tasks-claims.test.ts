import { setTimeout as sleep } from 'node:timers/promises';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicSurface } from '../helpers/basic-surface.ts';
import { flowWalker } from '../helpers/flow-walk.ts';
import { compiledSpecification } from '../helpers/compiled-specification.ts';
import { call
, type ApiResponse, type RequestOptions } from '../helpers/http.ts';
import { publishDeployerWithCredential, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Claims of README.md ("What is served today", "Variant A", the flow's "Answers make tasks", the
 * Tasks section's cancelled tasks, the export packs' definition of done and SPEC.md, the Kits
 * section's first paragraph) and of control-plane/README.md's glossary ("Variant A", "User story",
 * a task's origin), checked against the real service over HTTP.
 */
let app: TestApp;
let key: string;
let orgId: string;
let walk: ReturnType<typeof flowWalker>;
let basic: (method: string, template: string, path: string, options?: RequestOptions) => Promise<ApiResponse>;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const post = (path: string, body: unknown, apiKey = key) => call(app.url, `/api${path}`, { apiKey, body });
const get = (path: string, apiKey = key) => call(app.url, `/api${path}`, { apiKey });
const asA = (method: string, path: string, apiKey: string, body?: unknown) => call(app.url, `/api/basic${path}`, { method, apiKey, body });

async function member(role: 'owner' | 'admin' | 'member' | 'customer', name: string): Promise<Actor> {
  const user = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, name);
  await sqlAsOwner('insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, $4)', [app.bootstrap.tenantId, orgId, user.userId, role]);
  return user;
}
async function assign(projectId: string, customer: Actor) {
  await sqlAsOwner('insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)', [app.bootstrap.tenantId, orgId, projectId, customer.userId]);
}
async function kitsOn(tenantId: string) {
  const on = await call(app.url, `/api/admin/tenants/${tenantId}/features`, { method: 'PATCH', apiKey: key, body: { kits_enabled: true } });
  expect(on.status, on.text).toBe(200);
}
const compiled = (projectId: string, options: Record<string, unknown> = {}) => compiledSpecification(app, key, projectId, options);
async function aProject(name: string, body: Record<string, unknown> = {}) {
  const created = await basic('POST', '/projects', '/projects', { body: { name, ...body } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}
async function aStory(projectId: string, body: Record<string, unknown> = {}) {
  const created = await basic('POST', '/userstories', '/userstories', { body: { projectId, title: 'A story', ...body } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_COMPILATION_PER_MINUTE: '1000' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  walk = flowWalker(app, key, orgId);
  ({ basic } = await basicSurface(app, key));
}, 120_000);
afterAll(() => app?.stop());

describe('"What is served today"', () => {
  it('serves "health, the caller (`/api/me`)", "Variant A\'s projects, user stories and kits (§4.2, at `/api/basic`)" and A\'s document', async () => {
    expect((await get('/health')).status).toBe(200);
    expect((await get('/me')).status).toBe(200);
    for (const path of ['/projects', '/userstories', '/kits']) expect((await basic('GET', path, path)).status, path).toBe(200);
    expect((await call(app.url, '/api/basic/openapi.json')).body.paths['/projects']).toBeDefined();
  });

  it('"Not served yet: Variant A\'s workflows (`/api/basic/workflows`: 404 in A\'s error shape)"', async () => {
    const workflows = await asA('GET', '/workflows', key);
    expect([workflows.status, workflows.body.code, workflows.body.success]).toEqual([404, 'NOT_FOUND', undefined]);
  });

  it('"`/agents/coordinate`", "`/exports/compile`" … "A path of those answers 404 NOT_FOUND in the envelope"', async () => {
    for (const path of ['/agents/coordinate', '/exports/compile', '/workflows', '/events', '/gaps']) {
      const answer = await post(path, {});
      expect([answer.status, answer.body.success, answer.body.error?.code], path).toEqual([404, false, 'NOT_FOUND']);
    }
  });
});

describe('Variant A: "Bodies are bare"', () => {
  it('runs the shell snippet: "→ 201 {id, name, description, status: draft, createdAt, updatedAt}" then "→ {items:[…], total:…, page:1, pageSize:5}"', async () => {
    const created = await fetch(`${app.url}/api/basic/projects`, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Pet clinic', description: 'Bookings for vets' }) });
    expect(created.status).toBe(201);
    const project = (await created.json()) as Record<string, unknown>;
    expect(Object.keys(project)).toEqual(['id', 'name', 'description', 'status', 'createdAt', 'updatedAt']);
    expect(project).toMatchObject({ name: 'Pet clinic', description: 'Bookings for vets', status: 'draft' });
    const listed = await fetch(`${app.url}/api/basic/projects?sort=name&order=desc&pageSize=5`, { headers: { 'X-API-Key': key } });
    expect(listed.status).toBe(200);
    const page = (await listed.json()) as { items: Array<{ name: string }>; total: number; page: number; pageSize: number };
    expect(Object.keys(page)).toEqual(['items', 'total', 'page', 'pageSize']);
    expect([page.page, page.pageSize, typeof page.total]).toEqual([1, 5, 'number']);
    const names = page.items.map((item: { name: string }) => item.name);
    expect(names).toEqual([...names].sort().reverse());
  });

  it('"an error `{code, message, details?}` with the same codes and statuses (the request id only in `X-Request-ID`); creates answer 201 and deletes 204 with no body"', async () => {
    const invalid = await basic('POST', '/projects', '/projects', { body: { name: '' } });
    expect(invalid.status).toBe(400);
    expect(Object.keys(invalid.body).sort()).toEqual(['code', 'details', 'message']);
    expect(invalid.body.code).toBe('VALIDATION_ERROR');
    expect(invalid.headers.get('x-request-id')).toMatch(/./);
    expect(invalid.text).not.toContain(invalid.headers.get('x-request-id')!);
    const project = await aProject('To delete');
    const deleted = await basic('DELETE', '/projects/{id}', `/projects/${project.id}`);
    expect([deleted.status, deleted.text]).toEqual([204, '']);
  });

  it('"Its document is `/api/basic/openapi.json` (the `/docs` page shows both)"', async () => {
    expect((await call(app.url, '/docs/')).status).toBe(200);
    const init = await call(app.url, '/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(init.text).toContain('/api/basic/openapi.json');
    expect(init.text).toContain('/api/openapi.json');
  });
});

describe('Variant A projects', () => {
  it('GET: "any signed-in user" … "the projects the caller can see (as on `/api/projects`)"', async () => {
    await aProject('Seen by both');
    const a = await basic('GET', '/projects', '/projects?pageSize=100');
    const b = await get('/projects?limit=100');
    expect(a.body.total).toBe(b.body.data.total);
    expect(a.body.items.map((item: { id: string }) => item.id).sort()).toEqual(b.body.data.projects.map((item: { id: string }) => item.id).sort());
    const loner = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Loner');
    const lonely = await asA('GET', '/projects', loner.apiKey);
    expect([lonely.status, lonely.body.total]).toEqual([200, 0]);
  });

  it('POST: "anyone else — a customer, a user in no organization, a platform admin acting in another tenant — is FORBIDDEN"', async () => {
    const customer = await member('customer', 'Customer');
    const loner = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Nobody');
    const other = await createTenant(app, 'Elsewhere A');
    const before = await countRows(app.database.ownerUrl, 'projects');
    for (const refused of [
      await asA('POST', '/projects', customer.apiKey, { name: 'Nope' }),
      await asA('POST', '/projects', loner.apiKey, { name: 'Nope' }),
      await call(app.url, '/api/basic/projects', { apiKey: key, headers: { 'x-tenant-id': other.tenantId }, body: { name: 'Nope' } }),
    ]) expect([refused.status, refused.body.code], refused.text).toEqual([403, 'FORBIDDEN']);
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(before);
  });

  it('POST: "201, the project … in the organization the caller joined first"', async () => {
    const user = await member('member', 'Two orgs');
    const founded = await post('/organizations', { name: 'Later org', slug: `later-${user.userId.slice(0, 8)}` });
    expect(founded.status, founded.text).toBe(201);
    expect((await post(`/organizations/${founded.body.data.id}/members`, { userId: user.userId, role: 'owner' })).status).toBe(201);
    const created = await asA('POST', '/projects', user.apiKey, { name: 'Where' });
    expect(created.status, created.text).toBe(201);
    expect((await sqlAsOwner('select organization_id from projects where id = $1', [created.body.id]))[0].organization_id).toBe(orgId);
  });

  it('PUT: "name and description replaced (a description left out is none)"', async () => {
    const project = await aProject('Before', { description: 'Had one' });
    const put = await basic('PUT', '/projects/{id}', `/projects/${project.id}`, { body: { name: 'After' } });
    expect(put.status, put.text).toBe(200);
    expect(put.body.name).toBe('After');
    expect(put.body.description).toBeUndefined();
  });

  it('PATCH: "the fields sent change; none changes nothing, `updatedAt` included"', async () => {
    const project = await aProject('Patched', { description: 'Kept' });
    await sleep(20);
    const none = await basic('PATCH', '/projects/{id}', `/projects/${project.id}`, { body: {} });
    expect(none.body).toEqual(project);
    const named = await basic('PATCH', '/projects/{id}', `/projects/${project.id}`, { body: { name: 'Renamed' } });
    expect([named.body.name, named.body.description]).toEqual(['Renamed', 'Kept']);
    expect(named.body.updatedAt > project.updatedAt).toBe(true);
  });

  it('DELETE: "admin or owner of its organization" → "204"; a member is refused', async () => {
    const plain = await member('member', 'Deleter');
    const admin = await member('admin', 'Admin deleter');
    const project = await aProject('Deleted by admin');
    const refused = await asA('DELETE', `/projects/${project.id}`, plain.apiKey);
    expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    const deleted = await asA('DELETE', `/projects/${project.id}`, admin.apiKey);
    expect(deleted.status).toBe(204);
    expect(await countRows(app.database.ownerUrl, 'projects where id = $1', [project.id])).toBe(0);
  });
});

describe('Variant A "Lists"', () => {
  it('"`page` from 1 (default 1), `pageSize` 1–100 (default 20), `order` `asc` (default)" and sort `createdAt` by default', async () => {
    for (let index = 0; index < 21; index += 1) await aProject(`Listed ${String(index).padStart(2, '0')}`);
    const page = await basic('GET', '/projects', '/projects');
    expect([page.body.page, page.body.pageSize, page.body.items.length]).toEqual([1, 20, 20]);
    const created = page.body.items.map((item: { createdAt: string }) => item.createdAt);
    expect(created).toEqual([...created].sort());
    expect((await basic('GET', '/projects', '/projects?pageSize=100')).body.pageSize).toBe(100);
  });

  it('"A parameter out of range, or one the operation does not take, is VALIDATION_ERROR"', async () => {
    for (const query of ['page=0', 'pageSize=0', 'pageSize=101', 'order=up', 'sort=status', 'limit=5']) {
      const refused = await basic('GET', '/projects', `/projects?${query}`);
      expect([refused.status, refused.body.code], query).toEqual([400, 'VALIDATION_ERROR']);
    }
  });

  it('"ties go by id in the same order, so pages never overlap"', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 4; index += 1) ids.push((await aProject('Same name tie')).id);
    const all: string[] = [];
    for (let pageNumber = 1; ; pageNumber += 1) {
      const page = await basic('GET', '/projects', `/projects?sort=name&order=desc&pageSize=3&page=${pageNumber}`);
      if (page.body.items.length === 0) break;
      all.push(...page.body.items.map((item: { id: string }) => item.id));
    }
    expect(new Set(all).size).toBe(all.length);
    const ties = all.filter((id) => ids.includes(id));
    expect(ties).toEqual([...ids].sort().reverse());
  });
});

describe('Variant A "Ids"', () => {
  it('"a create may bring its own `id` … an id already taken is CONFLICT and writes nothing (… the taken one may be another tenant\'s …)"', async () => {
    const other = await createTenant(app, 'Id owner');
    const theirs = await call(app.url, '/api/basic/projects', { apiKey: other.apiKey, body: { name: 'Theirs' } });
    expect(theirs.status, theirs.text).toBe(201);
    const before = await countRows(app.database.ownerUrl, 'projects');
    const taken = await basic('POST', '/projects', '/projects', { body: { id: theirs.body.id, name: 'Mine' } });
    expect([taken.status, taken.body.code]).toEqual([409, 'CONFLICT']);
    expect(taken.text).not.toContain('tenant');
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(before);
    const id = crypto.randomUUID();
    expect((await aProject('Own id', { id })).id).toBe(id);
    const theirStory = await call(app.url, '/api/basic/userstories', { apiKey: other.apiKey, body: { projectId: theirs.body.id, title: 'Their story' } });
    expect(theirStory.status, theirStory.text).toBe(201);
    const storyTaken = await basic('POST', '/userstories', '/userstories', { body: { id: theirStory.body.id, projectId: id, title: 'Taken' } });
    expect([storyTaken.status, storyTaken.body.code]).toEqual([409, 'CONFLICT']);
  });

  it('"A PUT or PATCH body may repeat the path\'s `id` …; another id is VALIDATION_ERROR … anywhere else the answer is NOT_FOUND"; ProjectInput timestamps "taken and ignored"; UserStoryInput\'s "VALIDATION_ERROR"', async () => {
    const project = await aProject('Repeat id');
    const again = await basic('PUT', '/projects/{id}', `/projects/${project.id}`, { body: { ...project, name: 'Sent back' } });
    expect([again.status, again.body.name, again.body.createdAt], again.text).toEqual([200, 'Sent back', project.createdAt]);
    const other = await basic('PATCH', '/projects/{id}', `/projects/${project.id}`, { body: { id: crypto.randomUUID() } });
    expect([other.status, other.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    const nowhere = await asA('PATCH', `/nothing/${project.id}`, key, { id: crypto.randomUUID() });
    expect([nowhere.status, nowhere.body.code]).toEqual([404, 'NOT_FOUND']);
    const story = await aStory(project.id);
    const stamped = await basic('PATCH', '/userstories/{id}', `/userstories/${story.id}`, { body: { createdAt: story.createdAt } });
    expect([stamped.status, stamped.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect((await basic('PATCH', '/userstories/{id}', `/userstories/${story.id}`, { body: { id: story.id, title: 'Same id' } })).status).toBe(200);
  });
});

describe('Variant A "A project\'s status"', () => {
  it('"`CREATED` is `draft`; `DISCOVERY` and `FEATURE_SELECTION` `discovery`; `PLAN_GENERATION`, `PLANNING` and `VISUAL_DISCOVERY` `planning`; `SPECIFICATION` `specification`; a completed project `complete`"', async () => {
    const project = await aProject('Phases');
    const expected: Array<[string, string, string]> = [
      ['CREATED', 'active', 'draft'], ['DISCOVERY', 'active', 'discovery'], ['FEATURE_SELECTION', 'active', 'discovery'],
      ['PLAN_GENERATION', 'active', 'planning'], ['PLANNING', 'active', 'planning'], ['VISUAL_DISCOVERY', 'active', 'planning'],
      ['SPECIFICATION', 'active', 'specification'], ['SPECIFICATION', 'completed', 'complete'],
    ];
    for (const [phase, status, shown] of expected) {
      await sqlAsOwner('update projects set phase = $2, status = $3 where id = $1', [project.id, phase, status]);
      expect((await basic('GET', '/projects/{id}', `/projects/${project.id}`)).body.status, phase).toBe(shown);
    }
  });

  it('"Writing a status moves the flow to the first phase of that group … a phase not ready is READINESS_FAILED … the status the project has already changes nothing"', async () => {
    const project = await aProject('Moved');
    const discovery = await basic('PATCH', '/projects/{id}', `/projects/${project.id}`, { body: { status: 'discovery' } });
    expect([discovery.status, discovery.body.status], discovery.text).toEqual([200, 'discovery']);
    expect((await sqlAsOwner('select phase from projects where id = $1', [project.id]))[0].phase).toBe('DISCOVERY');
    expect(await countRows(app.database.ownerUrl, 'flow_questions where project_id = $1', [project.id])).toBeGreaterThan(0);
    const same = await basic('PATCH', '/projects/{id}', `/projects/${project.id}`, { body: { status: 'discovery' } });
    expect(same.body).toEqual(discovery.body);
    const notReady = await basic('PATCH', '/projects/{id}', `/projects/${project.id}`, { body: { status: 'planning', name: 'Not renamed' } });
    expect([notReady.status, notReady.body.code]).toEqual([400, 'READINESS_FAILED']);
    expect((await basic('GET', '/projects/{id}', `/projects/${project.id}`)).body.name).toBe('Moved');
  });

  it('"a customer is FORBIDDEN"; "A phase never moves back … PHASE_INVALID"; "`complete` is written from `specification`"; "writing `specification` to a complete project opens it again"; "An archived project is CONFLICT"', async () => {
    const projectId = await walk.finishedProject('Status walk');
    const customer = await member('customer', 'Status customer');
    await assign(projectId, customer);
    const byCustomer = await asA('PATCH', `/projects/${projectId}`, customer.apiKey, { status: 'complete' });
    expect([byCustomer.status, byCustomer.body.code]).toEqual([403, 'FORBIDDEN']);
    const back = await basic('PATCH', '/projects/{id}', `/projects/${projectId}`, { body: { status: 'draft' } });
    expect([back.status, back.body.code]).toEqual([400, 'PHASE_INVALID']);
    const complete = await basic('PATCH', '/projects/{id}', `/projects/${projectId}`, { body: { status: 'complete' } });
    expect([complete.status, complete.body.status], complete.text).toEqual([200, 'complete']);
    expect((await get(`/projects/${projectId}`)).body.data.status).toBe('completed');
    const reopened = await basic('PATCH', '/projects/{id}', `/projects/${projectId}`, { body: { status: 'specification' } });
    expect([reopened.status, reopened.body.status]).toEqual([200, 'specification']);
    expect((await get(`/projects/${projectId}`)).body.data.status).toBe('active');
    expect((await call(app.url, `/api/projects/${projectId}`, { method: 'PATCH', apiKey: key, body: { status: 'archived' } })).status).toBe(200);
    const archived = await basic('PATCH', '/projects/{id}', `/projects/${projectId}`, { body: { status: 'complete', name: 'Renamed' } });
    expect([archived.status, archived.body.code]).toEqual([409, 'CONFLICT']);
    expect((await get(`/projects/${projectId}`)).body.data.name).toBe('Status walk');
  });
});

describe('Variant A user stories', () => {
  it('GET: "`sort`: `createdAt`, `updatedAt`, `title`, `priority`, `status`; the last two by rank" and `projectId` narrows the list', async () => {
    const project = await aProject('Ranked');
    for (const [title, priority, status] of [['b', 'low', 'done'], ['a', 'critical', 'draft'], ['c', 'medium', 'in_progress'], ['d', 'high', 'ready']]) {
      const created = await basic('POST', '/userstories', '/userstories', { body: { projectId: project.id, title, priority, status } });
      expect(created.status, created.text).toBe(201);
    }
    const order = async (sort: string) => (await basic('GET', '/userstories', `/userstories?projectId=${project.id}&sort=${sort}`)).body.items.map((item: { title: string }) => item.title).join('');
    expect(await order('title')).toBe('abcd');
    expect(await order('createdAt')).toBe('bacd');
    const priorities = (await basic('GET', '/userstories', `/userstories?projectId=${project.id}&sort=priority`)).body.items.map((item: { priority: string }) => item.priority);
    const statuses = (await basic('GET', '/userstories', `/userstories?projectId=${project.id}&sort=status`)).body.items.map((item: { status: string }) => item.status);
    expect(priorities).toEqual(['low', 'medium', 'high', 'critical']);
    expect(statuses).toEqual(['draft', 'ready', 'in_progress', 'done']);
  });

  it('POST: "member or above of the project\'s organization" → "201, the story `{id, projectId, title, description?, priority, status, acceptanceCriteria, createdAt, updatedAt}`"; PUT defaults "(priority `medium`, status `draft`, no description, no criteria)"; DELETE "member or above" → 204', async () => {
    const project = await aProject('Stories');
    const plain = await member('member', 'Story writer');
    const created = await asA('POST', '/userstories', plain.apiKey, { projectId: project.id, title: 'Book', description: 'd', priority: 'high', status: 'ready', acceptanceCriteria: ['x'] });
    expect(created.status, created.text).toBe(201);
    expect(Object.keys(created.body)).toEqual(['id', 'projectId', 'title', 'description', 'priority', 'status', 'acceptanceCriteria', 'createdAt', 'updatedAt']);
    const put = await asA('PUT', `/userstories/${created.body.id}`, plain.apiKey, { projectId: project.id, title: 'Book again' });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ priority: 'medium', status: 'draft', acceptanceCriteria: [] });
    expect(put.body.description).toBeUndefined();
    const moved = await asA('PATCH', `/userstories/${created.body.id}`, plain.apiKey, { projectId: (await aProject('Other home')).id });
    expect([moved.status, moved.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect((await asA('DELETE', `/userstories/${created.body.id}`, plain.apiKey)).status).toBe(204);
  });

  it('"A customer assigned the project reads its stories and is FORBIDDEN to write them"', async () => {
    const project = await aProject('Customer stories');
    const story = await aStory(project.id);
    const customer = await member('customer', 'Story customer');
    await assign(project.id, customer);
    expect((await asA('GET', `/userstories?projectId=${project.id}`, customer.apiKey)).body.total).toBe(1);
    for (const refused of [
      await asA('POST', '/userstories', customer.apiKey, { projectId: project.id, title: 'Mine' }),
      await asA('PATCH', `/userstories/${story.id}`, customer.apiKey, { title: 'Mine' }),
      await asA('DELETE', `/userstories/${story.id}`, customer.apiKey),
    ]) expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('"A project holds at most 200 stories …; a create beyond that is CONFLICT"', async () => {
    const project = await aProject('Full');
    await sqlAsOwner(`insert into user_stories (tenant_id, project_id, title, acceptance_criteria) select $1, $2, 'S' || n, '[]'::jsonb from generate_series(1, 200) n`, [app.bootstrap.tenantId, project.id]);
    const refused = await basic('POST', '/userstories', '/userstories', { body: { projectId: project.id, title: 'One more' } });
    expect([refused.status, refused.body.code], refused.text).toEqual([409, 'CONFLICT']);
  });

  it('"A compile turns each story into a functional requirement (`US-001`, … after the features\' requirements, `source: "user-story"`; critical and high → `must`, medium → `should`, low → `could`; its acceptance criteria, with a test plan a test case expecting them, and with a task graph a "Build" task on the models before the release)"', async () => {
    const projectId = await walk.finishedProject('Stories compiled');
    for (const [title, priority] of [['Critical one', 'critical'], ['High one', 'high'], ['Medium one', 'medium'], ['Low one', 'low']]) {
      await aStory(projectId, { title, priority, acceptanceCriteria: [`${title} works`] });
    }
    const spec = await compiled(projectId, { includeTestPlan: true, includeTaskGraph: true });
    expect(spec.status, JSON.stringify(spec)).toBe('completed');
    const requirements = spec.spec.requirements as Array<{ id: string; source: string; priority: string; title: string; kind: string; acceptanceCriteria: string[] }>;
    const stories = requirements.filter((requirement) => requirement.source === 'user-story');
    expect(stories.map((r) => [r.id, r.kind, r.priority, r.title])).toEqual([
      ['US-001', 'functional', 'must', 'Critical one'], ['US-002', 'functional', 'must', 'High one'], ['US-003', 'functional', 'should', 'Medium one'], ['US-004', 'functional', 'could', 'Low one'],
    ]);
    const lastFeature = requirements.map((requirement) => requirement.source).findLastIndex((source) => source.startsWith('features.'));
    expect(lastFeature).toBeGreaterThanOrEqual(0);
    expect(requirements.findIndex((requirement) => requirement.source === 'user-story')).toBe(lastFeature + 1);
    expect(stories.map((r) => r.acceptanceCriteria)).toEqual([['Critical one works'], ['High one works'], ['Medium one works'], ['Low one works']]);
    const cases = spec.spec.testCases as Array<{ requirementId: string; expected: string }>;
    expect(cases.filter((test) => test.requirementId.startsWith('US-')).map((test) => [test.requirementId, test.expected])).toEqual([
      ['US-001', 'Critical one works'], ['US-002', 'High one works'], ['US-003', 'Medium one works'], ['US-004', 'Low one works'],
    ]);
    const tasks = spec.spec.taskGraph.tasks as Array<{ id: string; title: string; dependsOn: string[] }>;
    const models = tasks.filter((task) => task.title.startsWith('Model ')).map((task) => task.id);
    const build = tasks.find((task) => task.title === 'Build Critical one')!;
    expect(build.dependsOn).toEqual(models);
    expect(tasks.find((task) => task.title === 'Release')!.dependsOn).toContain(build.id);
  });

  it('"stories alone satisfy the rule that a specification has a functional requirement"; glossary: "owned by one project and deleted with it"', async () => {
    const { projectId, id } = await walk.startedProject('Only stories');
    await walk.answer(projectId, id('problem'), 'Clinics lose bookings after hours.');
    await walk.answer(projectId, id('entities'), 'clinic, appointment');
    const project = { id: projectId };
    const without = await compiled(projectId);
    expect(without.validation.errors.map((error: { code: string }) => error.code)).toEqual(['no_features']);
    await aStory(project.id, { title: 'Only requirement' });
    const spec = await compiled(project.id);
    expect([spec.validation.passed, spec.validation.errors]).toEqual([true, []]);
    expect(spec.spec.requirements.filter((requirement: { kind: string }) => requirement.kind === 'functional').map((requirement: { id: string }) => requirement.id)).toEqual(['US-001']);
    expect((await basic('DELETE', '/projects/{id}', `/projects/${project.id}`)).status).toBe(204);
    expect(await countRows(app.database.ownerUrl, 'user_stories where project_id = $1', [project.id])).toBe(0);
  });
});

describe('Variant A kits', () => {
  let kitId: string;
  beforeAll(async () => {
    const published = await post(`/${orgId}/kits`, sampleKit({ id: 'basic-claims-kit' }));
    expect(published.status, published.text).toBe(201);
    const listed = await basic('GET', '/kits', '/kits?pageSize=100');
    kitId = listed.body.items.find((kit: { metadata: { kitId: string } }) => kit.metadata.kitId === 'basic-claims-kit').id;
  });

  it('GET: "the kits of the caller\'s organizations (no built-in kit): `{id, name, description?, version?, status, metadata {kitId, kitType, organizationId, platform {name, category}}, createdAt, updatedAt}`"; "`published` for Variant B\'s `active`"', async () => {
    const listed = await basic('GET', '/kits', '/kits?pageSize=100');
    const builtIn = (await get(`/${orgId}/kits?limit=100`)).body.data.kits.filter((kit: { builtIn: boolean }) => kit.builtIn).map((kit: { id: string }) => kit.id);
    expect(listed.body.items.map((kit: { metadata: { kitId: string } }) => kit.metadata.kitId)).not.toEqual(expect.arrayContaining(builtIn.length ? [builtIn[0]] : ['-']));
    const kit = listed.body.items.find((item: { id: string }) => item.id === kitId);
    expect(Object.keys(kit).filter((field) => !['description', 'version'].includes(field))).toEqual(['id', 'name', 'status', 'metadata', 'createdAt', 'updatedAt']);
    expect(Object.keys(kit.metadata)).toEqual(['kitId', 'kitType', 'organizationId', 'platform']);
    expect(Object.keys(kit.metadata.platform)).toEqual(['name', 'category']);
    expect([kit.status, kit.metadata.organizationId]).toEqual(['published', orgId]);
  });

  it('GET: "a customer, or a platform admin acting in another tenant, reads none"; "GET /api/basic/kits/{id}: member or above"; "a kit of an organization the caller is not in is NOT_FOUND"', async () => {
    const customer = await member('customer', 'Kit customer');
    expect((await asA('GET', '/kits', customer.apiKey)).body.total).toBe(0);
    const other = await createTenant(app, 'Kit elsewhere');
    await kitsOn(other.tenantId);
    expect((await call(app.url, '/api/basic/kits', { apiKey: key, headers: { 'x-tenant-id': other.tenantId } })).body.total).toBe(0);
    const plain = await member('member', 'Kit reader');
    expect((await asA('GET', `/kits/${kitId}`, plain.apiKey)).status).toBe(200);
    const stranger = await asA('GET', `/kits/${kitId}`, other.apiKey);
    expect([stranger.status, stranger.body.code]).toEqual([404, 'NOT_FOUND']);
    const asCustomer = await asA('GET', `/kits/${kitId}`, customer.apiKey);
    expect(asCustomer.status).not.toBe(200);
  });

  it('PATCH: "admin or owner … (a member is FORBIDDEN; anyone outside it gets NOT_FOUND)"; "`deprecated` or `published` again"; "no status, or the one it has, changes nothing, `updatedAt` included"; "`name` … in a PATCH are VALIDATION_ERROR"', async () => {
    const plain = await member('member', 'Kit patcher');
    const refused = await asA('PATCH', `/kits/${kitId}`, plain.apiKey, { status: 'deprecated' });
    expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    const outsider = await createTenant(app, 'Kit outsider');
    await kitsOn(outsider.tenantId);
    expect((await asA('PATCH', `/kits/${kitId}`, outsider.apiKey, { status: 'deprecated' })).status).toBe(404);
    const before = (await basic('GET', '/kits/{id}', `/kits/${kitId}`)).body;
    await sleep(20);
    expect((await basic('PATCH', '/kits/{id}', `/kits/${kitId}`, { body: {} })).body).toEqual(before);
    expect((await basic('PATCH', '/kits/{id}', `/kits/${kitId}`, { body: { status: 'published' } })).body).toEqual(before);
    const deprecated = await basic('PATCH', '/kits/{id}', `/kits/${kitId}`, { body: { status: 'deprecated' } });
    expect([deprecated.status, deprecated.body.status]).toEqual([200, 'deprecated']);
    expect((await get(`/${orgId}/kits/basic-claims-kit`)).body.data.status ?? 'deprecated').toBe('deprecated');
    expect((await basic('PATCH', '/kits/{id}', `/kits/${kitId}`, { body: { status: 'published' } })).body.status).toBe('published');
    const named = await basic('PATCH', '/kits/{id}', `/kits/${kitId}`, { body: { name: 'Renamed' } });
    expect([named.status, named.body.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('"`POST` and `PUT` on `/api/basic/kits` answer 405 with `Allow`, as does `DELETE`"', async () => {
    for (const [method, path] of [['POST', '/kits'], ['PUT', `/kits/${kitId}`], ['DELETE', `/kits/${kitId}`], ['PUT', '/kits'], ['DELETE', '/kits']]) {
      const refused = await asA(method!, path!, key, method === 'DELETE' ? undefined : {});
      expect([refused.status, refused.body.code, refused.headers.get('allow')], `${method} ${path}`).toEqual([405, 'METHOD_NOT_ALLOWED', expect.stringContaining('GET')]);
    }
  });

  it('"with `kits_enabled` off every kit route is FORBIDDEN naming the flag"', async () => {
    const other = await createTenant(app, 'Kitless');
    const off = await call(app.url, `/api/admin/tenants/${other.tenantId}/features`, { method: 'PATCH', apiKey: key, body: { kits_enabled: false } });
    expect(off.status, off.text).toBe(200);
    for (const [method, path] of [['GET', '/kits'], ['GET', `/kits/${kitId}`], ['PATCH', `/kits/${kitId}`]]) {
      const refused = await asA(method!, path!, other.apiKey, method === 'PATCH' ? { status: 'deprecated' } : undefined);
      expect([refused.status, refused.body.code], `${method} ${path}`).toEqual([403, 'FORBIDDEN']);
      expect(refused.body.message).toContain('kits_enabled');
    }
  });
});

describe('Variant A: "Before a procedure runs, refusals keep A\'s shape too: 401, 405 with `Allow`, 415, 429, and NOT_FOUND"', () => {
  it('answers 401, 405, 415 and 404 as `{code, message}`', async () => {
    const unauthorized = await call(app.url, '/api/basic/userstories');
    expect([unauthorized.status, unauthorized.body.code, unauthorized.body.success]).toEqual([401, 'UNAUTHORIZED', undefined]);
    const method = await asA('PUT', '/projects', key, {});
    expect([method.status, method.body.code, method.headers.get('allow')]).toEqual([405, 'METHOD_NOT_ALLOWED', expect.stringContaining('POST')]);
    const media = await call(app.url, '/api/basic/userstories', { apiKey: key, rawBody: 'x', headers: { 'content-type': 'text/plain' } });
    expect([media.status, media.body.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const missing = await asA('GET', '/workflows/x', key);
    expect([missing.status, Object.keys(missing.body).sort()]).toEqual([404, ['code', 'message']]);
  });

  it('answers 429 as `{code, message}`', async () => {
    const limited = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '2' } });
    try {
      let last: ApiResponse | undefined;
      for (let index = 0; index < 4; index += 1) last = await call(limited.url, '/api/basic/projects', { apiKey: limited.bootstrap.apiKey });
      expect([last!.status, last!.body.code, last!.body.success]).toEqual([429, 'RATE_LIMITED', undefined]);
    } finally {
      await limited.stop();
    }
  });
});

describe('Flow: "Answers make tasks"', () => {
  const tasksOf = async (projectId: string) => (await get(`/tasks?projectId=${projectId}&limit=100`)).body.data.tasks as Array<Record<string, any>>;
  const originsOf = async (projectId: string) => (await sqlAsOwner('select title, origin, status, created_by, assignee_type, assignee_id from tasks where project_id = $1 order by title', [projectId]));

  it('"the `integrations` answer a CONNECT task per outside system it names ("Connect Stripe", a form asking how it is reached: `authentication` required, `baseUrl` and `documentationUrl`)" — `effects.tasksCreated [{taskId, type, title}]`, then on `GET /api/tasks`', async () => {
    const { projectId, id } = await walk.startedProject('Connects');
    const answered = await walk.answer(projectId, id('integrations'), 'Stripe');
    expect(answered.effects.tasksCreated).toEqual([{ taskId: expect.any(String), type: 'CONNECT', title: 'Connect Stripe' }]);
    const [task] = await tasksOf(projectId);
    expect([task!.id, task!.type, task!.status]).toEqual([answered.effects.tasksCreated[0].taskId, 'CONNECT', 'pending']);
    expect(task!.actions).toHaveLength(1);
    expect(task!.actions[0].type).toBe('FORM_SUBMIT');
    expect(task!.actions[0].config.fields.map((field: { name: string; required?: boolean }) => [field.name, field.required ?? false]).sort()).toEqual([['authentication', true], ['baseUrl', false], ['documentationUrl', false]]);
  });

  it('"at most 20 systems"; "split at commas, semicolons and lines in any script, "none", "N/A" or "-" naming nothing"; "compared ignoring letter case, spacing, invisible characters and full-width forms"', async () => {
    const { projectId, id } = await walk.startedProject('Many systems');
    const names = Array.from({ length: 25 }, (_, index) => `System ${index + 1}`);
    const many = await walk.answer(projectId, id('integrations'), names.join(', '));
    expect(many.effects.tasksCreated).toHaveLength(20);
    const split = await walk.startedProject('Split');
    const separated = await walk.answer(split.projectId, split.id('integrations'), 'Stripe; Twilio\nSlack、Zoom，none, N/A; -');
    expect(separated.effects.tasksCreated.map((task: { title: string }) => task.title)).toEqual(['Connect Stripe', 'Connect Twilio', 'Connect Slack', 'Connect Zoom']);
    const same = await walk.answer(split.projectId, split.id('integrations'), 'ＳＴＲＩＰＥ; twi\u200Blio\n  SLACK  , zoom');
    expect(same.effects.tasksCreated).toEqual([]);
    expect((await originsOf(split.projectId)).map((row: { status: string }) => row.status)).toEqual(['pending', 'pending', 'pending', 'pending']);
    const nothing = await walk.startedProject('Nothing');
    expect((await walk.answer(nothing.projectId, nothing.id('integrations'), 'none; N/A\n-')).effects.tasksCreated).toEqual([]);
  });

  it('"each at most 100 characters"; origin: "a very long one cut and ended with a digest"', async () => {
    const { projectId, id } = await walk.startedProject('Long names');
    const long = await call(app.url, '/api/flow/answer-question', { apiKey: key, body: { projectId, questionId: id('integrations'), answer: { value: 'x'.repeat(101) } } });
    expect(long.status, long.text).toBe(200);
    expect(long.body.data.effects.tasksCreated.map((task: { title: string }) => task.title)).toEqual([`Connect ${'x'.repeat(100)}`]);
    // A name of 100 characters that folds (as full-width forms fold) to 1,800 is cut, and ends with a digest.
    const wide = await call(app.url, '/api/flow/answer-question', { apiKey: key, body: { projectId, questionId: id('integrations'), answer: { value: '\uFDFA'.repeat(100) } } });
    expect(wide.status, wide.text).toBe(200);
    const origin = (await originsOf(projectId)).find((row: { status: string }) => row.status === 'pending').origin as string;
    expect(origin).toMatch(/^integration:.{167}#[0-9a-f]{32}$/u);
  });

  it('"the `compliance` answer a REVIEW task per regulation it picks ("Review GDPR obligations", high priority, approve or reject with a comment)"; glossary origin `compliance:gdpr`', async () => {
    const { projectId, id } = await walk.startedProject('Regulated');
    const answered = await walk.answer(projectId, id('compliance'), ['gdpr']);
    expect(answered.effects.tasksCreated).toEqual([{ taskId: expect.any(String), type: 'REVIEW', title: 'Review GDPR obligations' }]);
    const [task] = await tasksOf(projectId);
    expect([task!.priority, task!.actions[0].type, task!.actions[0].config.requireComment]).toEqual(['high', 'APPROVE_REJECT', true]);
    const noComment = await post(`/tasks/${task!.id}/actions/a1`, { data: { decision: 'reject' } });
    expect([noComment.status, noComment.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect((await originsOf(projectId)).map((row: { origin: string }) => row.origin)).toEqual(['compliance:gdpr']);
  });

  it('"a task it no longer asks for is cancelled, unless completed or another open task depends on it (which stay); a cancelled one it asks for again is pending again (not listed in `tasksCreated`)"; "none is ever made twice"; Tasks: "a cancelled task cannot be a new task\'s dependency (VALIDATION_ERROR on `dependencies.<i>`)"', async () => {
    const { projectId, id } = await walk.startedProject('In line');
    const made = (await walk.answer(projectId, id('integrations'), 'Stripe, Twilio, Slack, Zoom')).effects.tasksCreated as Array<{ taskId: string; title: string }>;
    const taskOf = (title: string) => made.find((task) => task.title === `Connect ${title}`)!.taskId;
    expect((await post(`/tasks/${taskOf('Twilio')}/actions/a1`, { data: { authentication: 'api key' } })).status).toBe(200);
    const waiting = await post('/tasks', { projectId, type: 'DECIDE', title: 'After Slack', description: 'd', dependencies: [taskOf('Slack')], actions: [{ type: 'SINGLE_SELECT', label: 'L', config: { options: [{ value: 'v', label: 'V' }] } }] });
    expect(waiting.status, waiting.text).toBe(201);
    const narrowed = await walk.answer(projectId, id('integrations'), 'Zoom');
    expect(narrowed.effects.tasksCreated).toEqual([]);
    const status = async () => Object.fromEntries((await tasksOf(projectId)).map((task) => [task.title, task.status]));
    expect(await status()).toEqual({ 'Connect Stripe': 'cancelled', 'Connect Twilio': 'completed', 'Connect Slack': 'pending', 'Connect Zoom': 'pending', 'After Slack': 'blocked' });
    const onCancelled = await post('/tasks', { projectId, type: 'DECIDE', title: 'After Stripe', description: 'd', dependencies: [taskOf('Zoom'), taskOf('Stripe')], actions: [{ type: 'SINGLE_SELECT', label: 'L', config: { options: [{ value: 'v', label: 'V' }] } }] });
    expect([onCancelled.status, onCancelled.body.error.code, onCancelled.body.error.details.issues[0].field]).toEqual([400, 'VALIDATION_ERROR', 'dependencies.1']);
    const again = await walk.answer(projectId, id('integrations'), 'Stripe, Zoom');
    expect(again.effects.tasksCreated).toEqual([]);
    expect((await status())['Connect Stripe']).toBe('pending');
    expect(await countRows(app.database.ownerUrl, 'tasks where project_id = $1', [projectId])).toBe(5);
  });

  it('"They are unassigned, made by whoever answered (a customer too)"', async () => {
    const { projectId, id } = await walk.startedProject('Customer answers');
    const customer = await member('customer', 'Answering customer');
    await assign(projectId, customer);
    const answered = await call(app.url, '/api/flow/answer-question', { apiKey: customer.apiKey, body: { projectId, questionId: id('integrations'), answer: { value: 'Stripe' } } });
    expect(answered.status, answered.text).toBe(200);
    expect(await originsOf(projectId)).toEqual([{ title: 'Connect Stripe', origin: 'integration:stripe', status: 'pending', created_by: customer.userId, assignee_type: null, assignee_id: null }]);
  });
});

describe('Export packs: the definition of done and SPEC.md', () => {
  it('"what shows it done (its test cases\' expected outcomes; without a test plan a user story\'s acceptance criteria, else a review) and what holds for the whole product"; "In `SPEC.md` a user story\'s requirement lists its acceptance criteria, one "Accepted when:" item each"', async () => {
    const projectId = await walk.finishedProject('Done when');
    await aStory(projectId, { title: 'Remind by SMS', acceptanceCriteria: ['An SMS goes out', 'It names the time'] });
    const unzip = async (specId: string, format: string, include: Record<string, boolean>) => {
      const exported = await post('/exports/download', { projectId, specId, format, include });
      expect(exported.status, exported.text).toBe(200);
      return unzipSync(new Uint8Array(await (await fetch(`${app.url}${exported.body.data.downloadUrl}`)).arrayBuffer()));
    };
    const planned = await compiled(projectId, { includeTestPlan: true });
    const withPlan = JSON.parse(strFromU8((await unzip(planned.id, 'json', { dod: true }))['definition-of-done.json']!));
    const storyWithPlan = withPlan.requirements.find((requirement: { requirementId: string }) => requirement.requirementId === 'US-001');
    expect(storyWithPlan.doneWhen).toEqual([expect.stringMatching(/^TC-\d+: An SMS goes out; It names the time$/)]);
    expect(withPlan.overall).toContain('Every test case of the test plan passes');
    const unplanned = await compiled(projectId, { includeTestPlan: false });
    const withoutPlan = JSON.parse(strFromU8((await unzip(unplanned.id, 'json', { dod: true }))['definition-of-done.json']!));
    expect(withoutPlan.requirements.find((requirement: { requirementId: string }) => requirement.requirementId === 'US-001').doneWhen).toEqual(['An SMS goes out', 'It names the time']);
    expect(withoutPlan.requirements.find((requirement: { requirementId: string }) => requirement.requirementId === 'FR-001').doneWhen).toEqual(['A review confirms it']);
    expect(withoutPlan.overall.length).toBeGreaterThan(0);
    const lines = strFromU8((await unzip(unplanned.id, 'markdown', {}))['SPEC.md']!).split('\n');
    const at = lines.findIndex((line) => line.startsWith('- **US-001**'));
    expect(lines.slice(at + 1, at + 4)).toEqual(['  - Accepted when: An SMS goes out', '  - Accepted when: It names the time', expect.not.stringMatching(/Accepted when/)]);
  });
});

describe('Kits: the first paragraph', () => {
  it('"needs the tenant\'s `kits_enabled` flag (on for the first-run tenant; a platform admin switches it with `PATCH /api/admin/tenants/{tenantId}/features`…, otherwise FORBIDDEN naming the flag)"', async () => {
    expect((await get(`/${orgId}/kits`)).status).toBe(200);
    const other = await createTenant(app, 'Flagged');
    const off = await call(app.url, `/api/${other.organizationId}/kits`, { apiKey: other.apiKey });
    expect([off.status, off.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect(off.body.error.message).toContain('kits_enabled');
    await kitsOn(other.tenantId);
    expect((await call(app.url, `/api/${other.organizationId}/kits`, { apiKey: other.apiKey })).status).toBe(200);
  });

  it('"the role member or above in the organization (a customer gets FORBIDDEN; a platform admin acting in another tenant, ORG_NOT_MEMBER)"; "Publishing, deprecating, and storing or deleting credentials need admin or owner"; "A `projectId` must name a project of that organization: any other … is NOT_FOUND"', async () => {
    const other = await createTenant(app, 'Kit tenant');
    await kitsOn(other.tenantId);
    const customer = await member('customer', 'Kit customer two');
    const asCustomer = await get(`/${orgId}/kits`, customer.apiKey);
    expect([asCustomer.status, asCustomer.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const acting = await call(app.url, `/api/${other.organizationId}/kits`, { apiKey: key, headers: { 'x-tenant-id': other.tenantId } });
    expect([acting.status, acting.body.error.code]).toEqual([403, 'ORG_NOT_MEMBER']);
    const plain = await member('member', 'Kit member');
    expect((await get(`/${orgId}/kits`, plain.apiKey)).status).toBe(200);
    const publish = await post(`/${orgId}/kits`, sampleKit({ id: 'member-kit' }), plain.apiKey);
    expect([publish.status, publish.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await post(`/${orgId}/kits`, sampleKit({ id: 'admin-kit' }))).status).toBe(201);
    const deprecate = await call(app.url, `/api/${orgId}/kits/admin-kit`, { method: 'PATCH', apiKey: plain.apiKey, body: { status: 'deprecated' } });
    expect([deprecate.status, deprecate.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const projectId = await walk.newProject('Kit project');
    const credential = await post(`/${orgId}/kits/credentials`, { projectId, kitId: 'admin-kit', credentialType: 'x', credentials: { token: 't' } }, plain.apiKey);
    expect([credential.status, credential.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const theirs = (await call(app.url, '/api/projects', { apiKey: other.apiKey, body: { name: 'Theirs' } })).body.data.id;
    const elsewhere = await post(`/${orgId}/kits/admin-kit/execute`, { projectId: theirs, businessProfile: { company: { name: 'A', industry: 'b' } }, discoveryAnswers: {} });
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });

  describe('executions queued when the authority to run them goes', () => {
    let api: TestApp;
    let worker: TestApp | undefined;
    afterAll(async () => {
      await worker?.stop();
      await api?.stop();
    });

    it('end `failed` "…so this execution did not run. Start a new execution once kits are enabled again." / "Whoever started this execution is no longer a member of its organization, so this execution did not run. A member can start a new execution." / "The API key this execution was started with has been revoked, … Start a new execution with a key in use."', async () => {
      api = await startTestApp({ mode: 'api' });
      const apiKey = api.bootstrap.apiKey;
      const org = api.bootstrap.organizationId;
      const deployer = await publishDeployerWithCredential(api.url, apiKey, org, 'token-for-claims');
      const sql = (text: string, values: unknown[] = []) => ownerQuery(api.database.ownerUrl, text, values);
      const starter = async (name: string) => {
        const user = await createUserInTenant(api, sql, api.bootstrap.tenantId, name);
        await sql(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`, [api.bootstrap.tenantId, org, user.userId]);
        return user;
      };
      const start = async (startKey: string) => {
        const started = await call(api.url, `/api/${org}/kits/deployer/execute`, { apiKey: startKey, body: { projectId: deployer.projectId, businessProfile: { company: { name: 'A', industry: 'b' } }, discoveryAnswers: {} } });
        expect(started.status, started.text).toBe(201);
        return started.body.data.executionId as string;
      };
      const removed = await starter('Removed');
      const revoked = await starter('Revoked');
      const byRemoved = await start(removed.apiKey);
      const [revokedKey] = await sql('select id from api_keys where user_id = $1', [revoked.userId]);
      const byRevoked = await start(revoked.apiKey);
      expect((await call(api.url, `/api/organizations/${org}/members/${removed.userId}`, { method: 'DELETE', apiKey })).status).toBe(200);
      expect((await call(api.url, `/api/developer/api-keys/${revokedKey.id}`, { method: 'DELETE', apiKey: revoked.apiKey })).status).toBe(200);
      const flag = async (enabled: boolean) => expect((await call(api.url, `/api/admin/tenants/${api.bootstrap.tenantId}/features`, { method: 'PATCH', apiKey, body: { kits_enabled: enabled } })).status).toBe(200);
      const drained = async () => {
        for (const deadline = Date.now() + 20_000; (await countRows(api.database.ownerUrl, `graphile_worker.jobs where task_identifier = 'kits.execute'`)) > 0 && Date.now() < deadline; ) await sleep(50);
      };
      const messageOf = async (executionId: string) => {
        const execution = await waitForExecution(api.url, apiKey, org, executionId, 10_000);
        expect(execution.status).toBe('failed');
        return execution.errorMessage as string;
      };
      worker = await startTestApp({ mode: 'worker', database: api.database, env: { WORKER_HEARTBEAT_MS: '500' } });
      await drained();
      expect(await messageOf(byRemoved)).toBe('Whoever started this execution is no longer a member of its organization, so this execution did not run. A member can start a new execution.');
      expect(await messageOf(byRevoked)).toMatch(/^The API key this execution was started with has been revoked, .* Start a new execution with a key in use\.$/);
      await worker.stop();
      worker = undefined;
      const switchedOff = await deployer.execute();
      await flag(false);
      worker = await startTestApp({ mode: 'worker', database: api.database, env: { WORKER_HEARTBEAT_MS: '500' } });
      await drained();
      await flag(true);
      expect(await messageOf(switchedOff)).toBe('Kits are disabled for this tenant (the feature flag kits_enabled is off), so this execution did not run. Start a new execution once kits are enabled again.');
    }, 60_000);
  });
});
