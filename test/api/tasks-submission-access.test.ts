import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { whileTransactionHolds } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Who a submission answers, and what its idempotency key tells: a task the caller cannot see is
 * NOT_FOUND with the same message as one that does not exist; a key answers its stored response
 * only to its own caller while they still may submit the task; two keys on one task complete it once.
 */
let app: TestApp;
let apiKey: string;
let walk: ReturnType<typeof flowWalker>;
let nonMember: Actor;
let member: Actor;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const post = (path: string, body: unknown, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key, body });
const choose = { type: 'SINGLE_SELECT', label: 'Pick a database', config: { options: [{ value: 'postgres', label: 'PostgreSQL' }, { value: 'mysql', label: 'MySQL' }] } };
const outcome = (response: { status: number; body: any }) => [response.status, response.body.error?.code ?? null, response.body.error?.message ?? null];

async function newTask(projectId: string) {
  const created = await post('/tasks', { projectId, type: 'DECIDE', title: 'Decide', description: 'A decision', actions: [choose] });
  expect(created.status, created.text).toBe(201);
  return created.body.data as { id: string };
}

beforeAll(async () => {
  app = await startTestApp();
  apiKey = app.bootstrap.apiKey;
  walk = flowWalker(app, apiKey, app.bootstrap.organizationId);
  nonMember = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Nora');
  member = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Mel');
  await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`, [app.bootstrap.tenantId, app.bootstrap.organizationId, member.userId]);
}, 120_000);
afterAll(() => app?.stop());

describe('a task the caller cannot see', () => {
  it('is NOT_FOUND with the message of a task that does not exist', async () => {
    const task = await newTask(await walk.newProject('Unseen'));
    const unknown = await post('/tasks/00000000-0000-4000-8000-000000000000/actions/a1', { data: { value: 'postgres' } }, nonMember.apiKey);
    const unseen = await post(`/tasks/${task.id}/actions/a1`, { data: { value: 'postgres' } }, nonMember.apiKey);
    expect(outcome(unknown)).toEqual([404, 'NOT_FOUND', 'The task was not found']);
    expect(outcome(unseen)).toEqual(outcome(unknown));
  });
});

describe("a submission's idempotency key", () => {
  it("answers nothing of the stored response to someone who cannot see the task, not even that the key was used", async () => {
    const task = await newTask(await walk.newProject('Stored response'));
    const body = { data: { value: 'postgres' }, idempotencyKey: 'owner-key-1' };
    expect((await post(`/tasks/${task.id}/actions/a1`, body)).status).toBe(200);
    const replayed = await post(`/tasks/${task.id}/actions/a1`, body, nonMember.apiKey);
    expect([...outcome(replayed), replayed.body.data]).toEqual([404, 'NOT_FOUND', 'The task was not found', undefined]);
    const other = await post(`/tasks/${task.id}/actions/a1`, { ...body, data: { value: 'mysql' } }, nonMember.apiKey);
    expect(outcome(other)).toEqual([404, 'NOT_FOUND', 'The task was not found']);
  });

  it("answers another user of the tenant IDEMPOTENCY_MISMATCH, never the first caller's response", async () => {
    const task = await newTask(await walk.newProject('Shared key'));
    const body = { data: { value: 'postgres' }, idempotencyKey: 'same-key-two-users' };
    const first = await post(`/tasks/${task.id}/actions/a1`, body);
    expect(first.status, first.text).toBe(200);
    const theirs = await post(`/tasks/${task.id}/actions/a1`, body, member.apiKey);
    expect(outcome(theirs)).toEqual([422, 'IDEMPOTENCY_MISMATCH', 'This idempotency key was used for another submission: use a new key for a new one']);
    // Its own caller still gets it back.
    expect((await post(`/tasks/${task.id}/actions/a1`, body)).body.data).toEqual(first.body.data);
  });

  it('answers a member who has since been removed NOT_FOUND', async () => {
    const leaver = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Lee');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`, [app.bootstrap.tenantId, app.bootstrap.organizationId, leaver.userId]);
    const task = await newTask(await walk.newProject('Leaver'));
    const body = { data: { value: 'mysql' }, idempotencyKey: 'leaver-key' };
    expect((await post(`/tasks/${task.id}/actions/a1`, body, leaver.apiKey)).status).toBe(200);
    await sqlAsOwner('delete from organization_members where user_id = $1', [leaver.userId]);
    expect(outcome(await post(`/tasks/${task.id}/actions/a1`, body, leaver.apiKey))).toEqual([404, 'NOT_FOUND', 'The task was not found']);
  });
});

describe('concurrent submissions', () => {
  it('with two keys on one task: one completes it, the other is CONFLICT, one submission stored', async () => {
    const task = await newTask(await walk.newProject('Two keys'));
    const [first, second] = await whileTransactionHolds(
      app.database.ownerUrl,
      (holder) => holder.query('select 1 from tasks where id = $1 for update', [task.id]),
      () => Promise.all([post(`/tasks/${task.id}/actions/a1`, { data: { value: 'postgres' }, idempotencyKey: 'race-1' }), post(`/tasks/${task.id}/actions/a1`, { data: { value: 'mysql' }, idempotencyKey: 'race-2' }, member.apiKey)]),
    );
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    expect(await countRows(app.database.ownerUrl, 'task_submissions where task_id = $1', [task.id])).toBe(1);
  });

  it('a member removed while their submission waits: NOT_FOUND, and the task stays open', async () => {
    const leaver = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Wes');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`, [app.bootstrap.tenantId, app.bootstrap.organizationId, leaver.userId]);
    const projectId = await walk.newProject('Removed while waiting');
    const task = await newTask(projectId);
    const answered = await whileTransactionHolds(
      app.database.ownerUrl,
      async (holder) => {
        await holder.query('select 1 from projects where id = $1 for update', [projectId]);
        await holder.query('delete from organization_members where user_id = $1', [leaver.userId]);
      },
      () => post(`/tasks/${task.id}/actions/a1`, { data: { value: 'postgres' } }, leaver.apiKey),
    );
    expect(outcome(answered)).toEqual([404, 'NOT_FOUND', 'The task was not found']);
    expect(await countRows(app.database.ownerUrl, "tasks where id = $1 and status = 'pending'", [task.id])).toBe(1);
  });
});
