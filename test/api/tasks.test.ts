import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** Tasks a project asks of people and agents, and the actions that answer them (seed §4.6, DESIGN §5.6). */
let app: TestApp;
let apiKey: string;
let orgId: string;
let walk: ReturnType<typeof flowWalker>;
let customer: Actor;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const post = (path: string, body: unknown, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key, body });
const get = (path: string, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key });

const approve = { type: 'APPROVE_REJECT', label: 'Approve the plan', config: { requireComment: true } };
const form = { type: 'FORM_SUBMIT', label: 'Give the keys', config: { fields: [{ name: 'stripeAccount', required: true }, { name: 'notes' }] } };
const choose = { type: 'SINGLE_SELECT', label: 'Pick a database', config: { options: [{ value: 'postgres', label: 'PostgreSQL' }, { value: 'mysql', label: 'MySQL' }], field: 'database' } };

async function newTask(projectId: string, extra: Record<string, unknown> = {}, key = apiKey) {
  const created = await post('/tasks', { projectId, type: 'DECIDE', title: 'Decide', description: 'A decision', actions: [choose], ...extra }, key);
  expect(created.status, created.text).toBe(201);
  return created.body.data;
}

beforeAll(async () => {
  app = await startTestApp();
  apiKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  walk = flowWalker(app, apiKey, orgId);
  customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Cora');
  await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, orgId, customer.userId]);
}, 120_000);
afterAll(() => app?.stop());

describe('tasks', () => {
  it('are created with their actions, listed oldest first with filters, and wait for their dependencies', async () => {
    const projectId = await walk.newProject('Tasks');
    const review = await newTask(projectId, { type: 'REVIEW', title: 'Review the plan', actions: [approve], priority: 'high', assigneeType: 'agent', assigneeId: 'architect', targets: [{ type: 'specification', id: 'v1' }] });
    expect(review).toMatchObject({
      projectId,
      type: 'REVIEW',
      status: 'pending',
      priority: 'high',
      assigneeType: 'agent',
      assigneeId: 'architect',
      actions: [{ id: 'a1', ...approve }],
      targets: [{ type: 'specification', id: 'v1' }],
      dependencies: [],
      dueDate: null,
      completedAt: null,
    });
    const provide = await newTask(projectId, { type: 'PROVIDE', title: 'Provide keys', actions: [form, choose], dependencies: [review.id], dueDate: '2026-12-01T09:00:00Z' });
    expect(provide).toMatchObject({ status: 'blocked', dependencies: [review.id], dueDate: '2026-12-01T09:00:00.000Z', priority: 'medium', actions: [{ id: 'a1' }, { id: 'a2' }] });

    const all = await get(`/tasks?projectId=${projectId}`);
    expect(all.status, all.text).toBe(200);
    expect(all.body.data).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(all.body.data.tasks.map((task: { id: string }) => task.id)).toEqual([review.id, provide.id]);
    expect((await get(`/tasks?projectId=${projectId}&status=blocked`)).body.data.tasks.map((task: { id: string }) => task.id)).toEqual([provide.id]);
    expect((await get(`/tasks?projectId=${projectId}&assigneeType=agent&type=REVIEW`)).body.data.total).toBe(1);
    expect((await get(`/tasks?projectId=${projectId}&limit=1&offset=1`)).body.data.tasks.map((task: { id: string }) => task.id)).toEqual([provide.id]);

    // A blocked task takes no action until its dependency completes; completing it unblocks the other.
    const early = await post(`/tasks/${provide.id}/actions/a1`, { data: { stripeAccount: 'acct_1' } });
    expect([early.status, early.body.error.code, early.body.error.message]).toEqual([409, 'CONFLICT', `The task waits for ${review.id} to complete`]);
    const approved = await post(`/tasks/${review.id}/actions/a1`, { data: { decision: 'approve' } });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body.data).toEqual({
      submissionId: expect.any(String),
      taskId: review.id,
      actionId: 'a1',
      result: { decision: 'approved', comment: null },
      effects: { taskCompleted: true, outputBindings: [{ field: 'decision', value: 'approved' }], workflowsTriggered: [] },
    });
    const tasks = (await get(`/tasks?projectId=${projectId}`)).body.data.tasks;
    expect(tasks.map((task: { status: string }) => task.status)).toEqual(['completed', 'pending']);
    expect(tasks[0].completedAt).not.toBeNull();

    const given = await post(`/tasks/${provide.id}/actions/a1`, { data: { stripeAccount: 'acct_1', notes: 'test mode' } });
    expect(given.body.data.effects.outputBindings).toEqual([{ field: 'stripeAccount', value: 'acct_1' }, { field: 'notes', value: 'test mode' }]);
    const again = await post(`/tasks/${provide.id}/actions/a2`, { data: { value: 'postgres' } });
    expect([again.status, again.body.error.code, again.body.error.message]).toEqual([409, 'CONFLICT', 'The task is completed']);
  });

  it("check each action's data against the action, and change nothing when it does not answer it", async () => {
    const projectId = await walk.newProject('Answers');
    const task = await newTask(projectId, { actions: [form, choose, approve] });
    const refused = async (actionId: string, data: unknown, field: string) => {
      const response = await post(`/tasks/${task.id}/actions/${actionId}`, { data });
      expect([response.status, response.body.error.code, response.body.error.details.issues[0].field], response.text).toEqual([400, 'VALIDATION_ERROR', field]);
    };
    await refused('a1', { notes: 'no account' }, 'data.stripeAccount');
    await refused('a1', { stripeAccount: 'x', color: 'red' }, 'data.color');
    await refused('a1', 'text', 'data');
    await refused('a2', { value: 'oracle' }, 'data.value');
    await refused('a3', { decision: 'maybe' }, 'data.decision');
    await refused('a3', { decision: 'reject' }, 'data.comment');
    const unknownAction = await post(`/tasks/${task.id}/actions/a9`, { data: {} });
    expect([unknownAction.status, unknownAction.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect(await countRows(app.database.ownerUrl, 'task_submissions where task_id = $1', [task.id])).toBe(0);
    expect((await get(`/tasks?projectId=${projectId}`)).body.data.tasks[0].status).toBe('pending');

    const rejected = await post(`/tasks/${task.id}/actions/a3`, { data: { decision: 'reject', comment: 'Too costly' } });
    expect(rejected.body.data).toMatchObject({ result: { decision: 'rejected', comment: 'Too costly' }, effects: { taskCompleted: true } });
  });

  it('refuse bad inputs with a clear error and store nothing', async () => {
    const projectId = await walk.newProject('Bad tasks');
    const other = await walk.newProject('Other');
    const foreignTask = await newTask(other);
    const before = await countRows(app.database.ownerUrl, 'tasks');
    const refuse = async (body: Record<string, unknown>, status: number, field?: string) => {
      const response = await post('/tasks', { projectId, type: 'DECIDE', title: 'T', description: 'D', actions: [choose], ...body });
      expect(response.status, response.text).toBe(status);
      if (field) expect(response.body.error.details.issues[0].field).toBe(field);
    };
    await refuse({ type: 'GUESS' }, 400, 'type');
    await refuse({ actions: [] }, 400, 'actions');
    await refuse({ actions: [{ type: 'DANCE', label: 'x', config: {} }] }, 400);
    await refuse({ actions: [{ ...choose, config: { options: [{ value: 'a', label: 'A' }, { value: 'a', label: 'B' }] } }] }, 400, 'actions.0.config.options');
    await refuse({ dependencies: [foreignTask.id] }, 400, 'dependencies.0');
    await refuse({ dependencies: ['00000000-0000-4000-8000-000000000000'] }, 400, 'dependencies.0');
    await refuse({ assigneeType: 'agent' }, 400, 'assigneeId');
    await refuse({ assigneeType: 'agent', assigneeId: 'poet' }, 400, 'assigneeId');
    await refuse({ assigneeType: 'user', assigneeId: 'not-a-user' }, 400, 'assigneeId');
    await refuse({ title: 'nul \u0000 byte' }, 400, 'title');
    await refuse({ dueDate: 'tomorrow' }, 400, 'dueDate');
    await refuse({ projectId: '00000000-0000-4000-8000-000000000000' }, 404);
    expect(await countRows(app.database.ownerUrl, 'tasks')).toBe(before);
    const list = await get('/tasks');
    expect([list.status, list.body.error.details.issues[0].field]).toEqual([400, 'projectId']);
  });
});

describe('idempotent submissions', () => {
  it('answer the same key and body with the first response, another body 422, and do the work once', async () => {
    const projectId = await walk.newProject('Idempotent');
    const task = await newTask(projectId);
    const body = { data: { value: 'postgres' }, idempotencyKey: 'choose-db-1' };
    const first = await post(`/tasks/${task.id}/actions/a1`, body);
    expect(first.status, first.text).toBe(200);
    const repeated = await post(`/tasks/${task.id}/actions/a1`, body);
    expect([repeated.status, repeated.body.data]).toEqual([200, first.body.data]);
    const changed = await post(`/tasks/${task.id}/actions/a1`, { ...body, data: { value: 'mysql' } });
    expect([changed.status, changed.body.error.code]).toEqual([422, 'IDEMPOTENCY_MISMATCH']);
    expect(await countRows(app.database.ownerUrl, 'task_submissions where task_id = $1', [task.id])).toBe(1);
    // Without a key, each submission is a new one: the task is done, so a second is CONFLICT.
    const unkeyed = await post(`/tasks/${task.id}/actions/a1`, { data: { value: 'postgres' } });
    expect([unkeyed.status, unkeyed.body.error.code]).toEqual([409, 'CONFLICT']);
    // Keys are the tenant's: another tenant's same key is its own.
    const foreign = await createTenant(app, 'Keys elsewhere');
    const foreignProject = (await post('/projects', { name: 'Theirs', organizationId: foreign.organizationId }, foreign.apiKey)).body.data.id;
    const foreignTask = await newTask(foreignProject, {}, foreign.apiKey);
    const theirs = await post(`/tasks/${foreignTask.id}/actions/a1`, { data: { value: 'mysql' }, idempotencyKey: 'choose-db-1' }, foreign.apiKey);
    expect([theirs.status, theirs.body.data.result.value]).toEqual([200, 'mysql']);
  });

  it('answer 409 while a submission with the same key is in progress', async () => {
    const projectId = await walk.newProject('In progress');
    const task = await newTask(projectId);
    // The test holds the key's lock as a submission in progress would.
    const holder = new (await import('pg')).default.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`task-submission:${app.bootstrap.tenantId}:busy-key`]);
      const busy = await post(`/tasks/${task.id}/actions/a1`, { data: { value: 'postgres' }, idempotencyKey: 'busy-key' });
      expect([busy.status, busy.body.error.code]).toEqual([409, 'CONFLICT']);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    expect((await post(`/tasks/${task.id}/actions/a1`, { data: { value: 'postgres' }, idempotencyKey: 'busy-key' })).status).toBe(200);
  });
});

describe('who', () => {
  it("customers see the project's tasks and submit only their own; user-tasks lists the caller's across projects", async () => {
    const projectId = await walk.newProject('Customer tasks');
    expect((await post('/agency-projects', { organizationId: orgId, projectId, customerUserId: customer.userId })).status).toBe(201);
    const theirs = await newTask(projectId, { title: 'Yours', assigneeType: 'user', assigneeId: customer.userId, dueDate: '2026-12-24T00:00:00Z' });
    const notTheirs = await newTask(projectId, { title: 'Not yours' });

    const refusedCreate = await post('/tasks', { projectId, type: 'DECIDE', title: 'T', description: 'D', actions: [choose] }, customer.apiKey);
    expect([refusedCreate.status, refusedCreate.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await get(`/tasks?projectId=${projectId}`, customer.apiKey)).body.data.total).toBe(2);
    const refusedSubmit = await post(`/tasks/${notTheirs.id}/actions/a1`, { data: { value: 'postgres' } }, customer.apiKey);
    expect([refusedSubmit.status, refusedSubmit.body.error.code]).toEqual([403, 'FORBIDDEN']);

    const mine = await get('/user-tasks', customer.apiKey);
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.data.tasks).toEqual([{ id: theirs.id, projectId, projectName: 'Customer tasks', type: 'DECIDE', title: 'Yours', status: 'pending', priority: 'medium', dueDate: '2026-12-24T00:00:00.000Z' }]);
    expect(mine.body.data.counts).toEqual({ pending: 1, inProgress: 0, completed: 0 });
    expect((await post(`/tasks/${theirs.id}/actions/a1`, { data: { value: 'mysql' } }, customer.apiKey)).status).toBe(200);
    expect((await get('/user-tasks', customer.apiKey)).body.data.counts).toEqual({ pending: 0, inProgress: 0, completed: 1 });

    // Once the assignment goes, so do the project's tasks for them.
    const [assignment] = await sqlAsOwner('select id from agency_project_assignments where project_id = $1', [projectId]);
    expect((await call(app.url, `/api/agency-projects/${assignment.id}`, { apiKey, method: 'DELETE' })).status).toBe(200);
    expect((await get('/user-tasks', customer.apiKey)).body.data.total).toBe(0);
    expect((await get(`/tasks?projectId=${projectId}`, customer.apiKey)).status).toBe(404);
  });

  it('another tenant sees nothing and changes nothing; a deleted project takes its tasks with it', async () => {
    const projectId = await walk.newProject('Private tasks');
    const first = await newTask(projectId);
    const second = await newTask(projectId, { dependencies: [first.id] });
    const foreign = await createTenant(app, 'Foreign tasks');
    expect((await get(`/tasks?projectId=${projectId}`, foreign.apiKey)).status).toBe(404);
    expect((await post(`/tasks/${first.id}/actions/a1`, { data: { value: 'postgres' } }, foreign.apiKey)).status).toBe(404);
    expect((await post('/tasks', { projectId, type: 'DECIDE', title: 'T', description: 'D', actions: [choose] }, foreign.apiKey)).status).toBe(404);
    expect((await get(`/tasks?projectId=${projectId}`)).body.data.tasks.map((task: { status: string }) => task.status)).toEqual(['pending', 'blocked']);

    expect((await post(`/tasks/${first.id}/actions/a1`, { data: { value: 'postgres' }, idempotencyKey: 'gone-with-project' })).status).toBe(200);
    const deleted = await call(app.url, `/api/projects/${projectId}`, { apiKey, method: 'DELETE' });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body.data.deletedTables).toEqual(expect.arrayContaining(['tasks', 'task_dependencies', 'task_submissions']));
    expect(await countRows(app.database.ownerUrl, 'tasks where id in ($1, $2)', [first.id, second.id])).toBe(0);
  });
});
