import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicSurface } from '../helpers/basic-surface.ts';
import { compiledSpecification } from '../helpers/compiled-specification.ts';
import { CLINIC_ANSWERS_BY_PHASE, flowWalker } from '../helpers/flow-walk.ts';
import { call, type ApiResponse, type RequestOptions } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Variant A's user stories over HTTP (/api/basic/userstories): bare bodies and errors held to the
 * document, who reads and who writes, and a story reaching the compiled specification.
 */

let app: TestApp;
let key: string;
let basic: (method: string, template: string, path: string, options?: RequestOptions) => Promise<ApiResponse>;
let projectId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000', RATE_LIMIT_COMPILATION_PER_MINUTE: '1000', WORKER_HEARTBEAT_MS: '500' } });
  key = app.bootstrap.apiKey;
  ({ basic } = await basicSurface(app, key));
  const made = await basic('POST', '/projects', '/projects', { body: { name: 'Story project' } });
  projectId = made.body.id;
}, 120_000);
afterAll(() => app?.stop());

const createStory = async (body: Record<string, unknown>) => {
  const response = await basic('POST', '/userstories', '/userstories', { body: { projectId, ...body } });
  expect(response.status, response.text).toBe(201);
  return response.body;
};

describe('/api/basic/userstories', () => {
  it('creates a story with its defaults, bare, and lists it in the wrapper', async () => {
    const story = await createStory({ title: 'Book after hours', acceptanceCriteria: ['A patient books at 23:00'] });
    expect(story).toEqual({ id: expect.any(String), projectId, title: 'Book after hours', priority: 'medium', status: 'draft', acceptanceCriteria: ['A patient books at 23:00'], createdAt: expect.any(String), updatedAt: expect.any(String) });
    const listed = await basic('GET', '/userstories', `/userstories?projectId=${projectId}`);
    expect(listed.body).toMatchObject({ total: 1, page: 1, pageSize: 20, items: [story] });
  });

  it('sorts by priority rank, not the alphabet', async () => {
    const { body: project } = await basic('POST', '/projects', '/projects', { body: { name: 'Ranked' } });
    for (const priority of ['low', 'critical', 'medium', 'high']) {
      expect((await basic('POST', '/userstories', '/userstories', { body: { projectId: project.id, title: priority, priority } })).status).toBe(201);
    }
    const ranked = await basic('GET', '/userstories', `/userstories?projectId=${project.id}&sort=priority&order=desc`);
    expect(ranked.body.items.map((story: { priority: string }) => story.priority)).toEqual(['critical', 'high', 'medium', 'low']);
  });

  it('PUT takes an answer sent back, PATCH the fields sent, DELETE answers 204', async () => {
    const story = await createStory({ title: 'Round trip', description: 'kept?', priority: 'high' });
    // UserStoryInput has no timestamps (seed §2.1): the story is sent back without them, its id kept.
    const { createdAt: _created, updatedAt: _updated, ...sentBack } = story;
    const withTimestamps = await basic('PUT', '/userstories/{id}', `/userstories/${story.id}`, { body: story });
    expect([withTimestamps.status, withTimestamps.body.details?.issues]).toEqual([400, [{ field: 'createdAt', issue: 'is not a field that can be set here' }, { field: 'updatedAt', issue: 'is not a field that can be set here' }]]);
    const replaced = await basic('PUT', '/userstories/{id}', `/userstories/${story.id}`, { body: { ...sentBack, title: 'Replaced', description: undefined, priority: undefined } });
    expect([replaced.status, replaced.body.title, replaced.body.description, replaced.body.priority]).toEqual([200, 'Replaced', undefined, 'medium']);
    const patched = await basic('PATCH', '/userstories/{id}', `/userstories/${story.id}`, { body: { status: 'ready' } });
    expect([patched.body.status, patched.body.title]).toEqual(['ready', 'Replaced']);
    const hijack = await basic('PUT', '/userstories/{id}', `/userstories/${story.id}`, { body: { ...sentBack, id: crypto.randomUUID() } });
    expect([hijack.status, hijack.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    const deleted = await basic('DELETE', '/userstories/{id}', `/userstories/${story.id}`);
    expect([deleted.status, deleted.text]).toEqual([204, '']);
    expect(await sqlAsOwner('select id from user_stories where id = $1', [story.id])).toEqual([]);
  });

  it('refuses bad input in the bare error shape and writes nothing', async () => {
    const before = await countRows(app.database.ownerUrl, 'user_stories');
    const bad = await basic('POST', '/userstories', '/userstories', { body: { projectId, title: '', priority: 'urgent', acceptanceCriteria: 'one' } });
    expect([bad.status, bad.body.code, bad.body.details.issues.map((issue: { field: string }) => issue.field).sort()]).toEqual([400, 'VALIDATION_ERROR', ['acceptanceCriteria', 'priority', 'title']]);
    const unseenProject = await basic('POST', '/userstories', '/userstories', { body: { projectId: crypto.randomUUID(), title: 'Nowhere' } });
    expect([unseenProject.status, unseenProject.body.code]).toEqual([404, 'NOT_FOUND']);
    expect(await countRows(app.database.ownerUrl, 'user_stories')).toBe(before);
  });

  it("hides another tenant's stories, and lets a customer read but not write", async () => {
    const story = await createStory({ title: 'Private' });
    const stranger = await createTenant(app, 'Story stranger');
    const theirs = await call(app.url, `/api/basic/userstories/${story.id}`, { apiKey: stranger.apiKey });
    expect([theirs.status, theirs.body]).toEqual([404, { code: 'NOT_FOUND', message: 'The user story was not found' }]);
    expect((await call(app.url, '/api/basic/userstories', { apiKey: stranger.apiKey })).body.total).toBe(0);
    const customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Reader');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, app.bootstrap.organizationId, customer.userId]);
    await sqlAsOwner('insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)', [app.bootstrap.tenantId, app.bootstrap.organizationId, projectId, customer.userId]);
    expect((await call(app.url, `/api/basic/userstories/${story.id}`, { apiKey: customer.apiKey })).status).toBe(200);
    const write = await call(app.url, `/api/basic/userstories/${story.id}`, { method: 'PATCH', apiKey: customer.apiKey, body: { title: 'Mine now' } });
    expect([write.status, write.body.code]).toEqual([403, 'FORBIDDEN']);
    expect((await sqlAsOwner('select title from user_stories where id = $1', [story.id]))[0].title).toBe('Private');
  });

  it('goes into the compiled specification as a functional requirement, and with the project when it is deleted', async () => {
    const walker = flowWalker(app, key, app.bootstrap.organizationId);
    const finished = await walker.finishedProject('Stories compiled', CLINIC_ANSWERS_BY_PHASE);
    const story = await basic('POST', '/userstories', '/userstories', { body: { projectId: finished, title: 'Remind patients by SMS', priority: 'critical', acceptanceCriteria: ['An SMS goes out a day before'] } });
    const spec = await compiledSpecification(app, key, finished);
    expect(spec.status).toBe('completed');
    const requirement = spec.spec.requirements.find((candidate: { source: string }) => candidate.source === 'user-story');
    expect(requirement).toMatchObject({ id: 'US-001', kind: 'functional', title: 'Remind patients by SMS', priority: 'must', acceptanceCriteria: ['An SMS goes out a day before'] });
    const deleted = await basic('DELETE', '/projects/{id}', `/projects/${finished}`);
    expect(deleted.status).toBe(204);
    expect(await sqlAsOwner('select id from user_stories where id = $1', [story.body.id])).toEqual([]);
  });
});
