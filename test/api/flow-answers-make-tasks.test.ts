import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Answers that make tasks (effects.tasksCreated): an outside system to connect, a regulation to
 * review. Answering again brings the tasks in line with the answer, never making one twice.
 */

let app: TestApp;
let key: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const walker = () => flowWalker(app, key, app.bootstrap.organizationId);

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
});
afterAll(() => app?.stop());

const tasksOf = async (projectId: string) => {
  const listed = await call(app.url, `/api/tasks?projectId=${projectId}`, { apiKey: key });
  expect(listed.status, listed.text).toBe(200);
  // Tasks one answer makes share their creation time, and a list breaks that tie by id: compared as a set.
  return listed.body.data.tasks.map((task: { title: string; status: string; type: string }) => [task.title, task.status]).sort();
};

describe('answering makes tasks', () => {
  it('makes a CONNECT task per outside system named, and answering again makes none twice', async () => {
    const flow = walker();
    const { projectId, id } = await flow.startedProject('Integrated');
    const first = await flow.answer(projectId, id('integrations'), 'Google Calendar, Stripe');
    expect(first.effects.tasksCreated).toEqual([
      { taskId: expect.any(String), type: 'CONNECT', title: 'Connect Google Calendar' },
      { taskId: expect.any(String), type: 'CONNECT', title: 'Connect Stripe' },
    ]);
    expect(await tasksOf(projectId)).toEqual([['Connect Google Calendar', 'pending'], ['Connect Stripe', 'pending']]);
    const [task] = await sqlAsOwner('select created_by, origin, actions from tasks where id = $1', [first.effects.tasksCreated[0].taskId]);
    expect(task).toMatchObject({ created_by: app.bootstrap.userId, origin: 'integration:google calendar' });

    const same = await flow.answer(projectId, id('integrations'), 'google calendar,stripe');
    expect(same.effects.tasksCreated).toEqual([]);
    expect(await tasksOf(projectId)).toEqual([['Connect Google Calendar', 'pending'], ['Connect Stripe', 'pending']]);
  });

  it('cancels the task of a system no longer named, keeps a completed one, and opens a cancelled one named again', async () => {
    const flow = walker();
    const { projectId, id } = await flow.startedProject('Changing answers');
    const made = await flow.answer(projectId, id('integrations'), 'Stripe, Salesforce');
    const stripe = made.effects.tasksCreated.find((created: { title: string }) => created.title === 'Connect Stripe').taskId;
    const done = await call(app.url, `/api/tasks/${stripe}/actions/a1`, { apiKey: key, body: { data: { authentication: 'API key' } } });
    expect(done.status, done.text).toBe(200);

    const fewer = await flow.answer(projectId, id('integrations'), 'none');
    expect(fewer.effects.tasksCreated).toEqual([]);
    expect(await tasksOf(projectId)).toEqual([['Connect Salesforce', 'cancelled'], ['Connect Stripe', 'completed']]);

    const again = await flow.answer(projectId, id('integrations'), 'Salesforce, HubSpot');
    expect(again.effects.tasksCreated.map((created: { title: string }) => created.title)).toEqual(['Connect HubSpot']);
    expect(await tasksOf(projectId)).toEqual([['Connect HubSpot', 'pending'], ['Connect Salesforce', 'pending'], ['Connect Stripe', 'completed']]);
  });

  it('makes a REVIEW task per regulation picked', async () => {
    const flow = walker();
    const { projectId, id } = await flow.startedProject('Regulated');
    const answered = await flow.answer(projectId, id('compliance'), ['gdpr', 'hipaa']);
    expect(answered.effects.tasksCreated.map((created: { type: string; title: string }) => [created.type, created.title])).toEqual([
      ['REVIEW', 'Review GDPR obligations'],
      ['REVIEW', 'Review HIPAA obligations'],
    ]);
    await flow.answer(projectId, id('compliance'), ['none']);
    expect(await tasksOf(projectId)).toEqual([['Review GDPR obligations', 'cancelled'], ['Review HIPAA obligations', 'cancelled']]);
  });

  it('makes them for a customer who answers too, and none for an answer refused', async () => {
    const flow = walker();
    const { projectId, id } = await flow.startedProject('Answered by a customer');
    const customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Answering customer');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, app.bootstrap.organizationId, customer.userId]);
    await sqlAsOwner('insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)', [app.bootstrap.tenantId, app.bootstrap.organizationId, projectId, customer.userId]);
    const answered = await call(app.url, '/api/flow/answer-question', { apiKey: customer.apiKey, body: { projectId, questionId: id('integrations'), answer: { value: 'Slack' } } });
    expect([answered.status, answered.body.data?.effects.tasksCreated.map((created: { title: string }) => created.title)]).toEqual([200, ['Connect Slack']]);
    expect((await sqlAsOwner('select created_by from tasks where project_id = $1', [projectId]))[0].created_by).toBe(customer.userId);

    const refused = await call(app.url, '/api/flow/answer-question', { apiKey: key, body: { projectId, questionId: id('integrations'), answer: { value: 42 } } });
    expect(refused.status).toBe(400);
    expect(await tasksOf(projectId)).toEqual([['Connect Slack', 'pending']]);
  });

  it('reads the names as the ontology does: "N/A" names nothing, "Ｓｔｒｉｐｅ" is Stripe, and a name that folds long is no 500', async () => {
    const flow = walker();
    const { projectId, id } = await flow.startedProject('Names as the ontology reads them');
    const nothing = await flow.answer(projectId, id('integrations'), 'N/A');
    expect([nothing.effects.tasksCreated, nothing.effects.ontologyUpdates]).toEqual([[], []]);

    const made = await flow.answer(projectId, id('integrations'), 'Stripe\uff0cSalesforce');
    expect(made.effects.ontologyUpdates.map((item: { name: string }) => item.name)).toEqual(['Stripe', 'Salesforce']);
    expect(made.effects.tasksCreated.map((created: { title: string }) => created.title)).toEqual(['Connect Stripe', 'Connect Salesforce']);
    const same = await flow.answer(projectId, id('integrations'), '\uff33\uff54\uff52\uff49\uff50\uff45\u200b, salesforce');
    expect(same.effects.tasksCreated).toEqual([]);
    expect(await tasksOf(projectId)).toEqual([['Connect Salesforce', 'pending'], ['Connect Stripe', 'pending']]);

    // "ﷺ" folds (NFKC) to 18 characters: a hundred of them are one system, and its task, once.
    const long = '\ufdfa'.repeat(100);
    for (let time = 0; time < 2; time += 1) {
      const answered = await call(app.url, '/api/flow/answer-question', { apiKey: key, body: { projectId, questionId: id('integrations'), answer: { value: long } } });
      expect([answered.status, answered.body.data?.effects.tasksCreated.length]).toEqual([200, time === 0 ? 1 : 0]);
    }
  });

  it('does not cancel a task another task waits for: that one would wait for ever', async () => {
    const flow = walker();
    const { projectId, id } = await flow.startedProject('Waited for');
    const made = await flow.answer(projectId, id('integrations'), 'Stripe, Salesforce');
    const [stripe] = made.effects.tasksCreated.filter((created: { title: string }) => created.title === 'Connect Stripe').map((created: { taskId: string }) => created.taskId);
    const payments = await call(app.url, '/api/tasks', {
      apiKey: key,
      body: { projectId, type: 'REVIEW', title: 'Take payments', description: 'Once Stripe is connected', actions: [{ type: 'APPROVE_REJECT', label: 'Payments work' }], dependencies: [stripe] },
    });
    expect([payments.status, payments.body.data?.status], payments.text).toEqual([201, 'blocked']);

    await flow.answer(projectId, id('integrations'), 'none');
    expect(await tasksOf(projectId)).toEqual([['Connect Salesforce', 'cancelled'], ['Connect Stripe', 'pending'], ['Take payments', 'blocked']]);
    const done = await call(app.url, `/api/tasks/${stripe}/actions/a1`, { apiKey: key, body: { data: { authentication: 'API key' } } });
    expect(done.status, done.text).toBe(200);
    expect(await tasksOf(projectId)).toEqual([['Connect Salesforce', 'cancelled'], ['Connect Stripe', 'completed'], ['Take payments', 'pending']]);
  });

  it('leaves no task waiting for good on one the flow cancelled: a cancelled task is refused as a dependency', async () => {
    const flow = walker();
    const { projectId, id } = await flow.startedProject('Cancelled dependency');
    const made = await flow.answer(projectId, id('integrations'), 'Zapier');
    await flow.answer(projectId, id('integrations'), 'none');
    const cancelledId = made.effects.tasksCreated[0].taskId;
    expect((await sqlAsOwner('select status from tasks where id = $1', [cancelledId]))[0].status).toBe('cancelled');
    const before = await sqlAsOwner('select count(*)::int as n from tasks where project_id = $1', [projectId]);
    const waiting = await call(app.url, '/api/tasks', { apiKey: key, body: { projectId, type: 'PROVIDE', title: 'After Zapier', description: 'Waits', actions: [{ type: 'APPROVE_REJECT', label: 'Done', config: {} }], dependencies: [cancelledId] } });
    expect([waiting.status, waiting.body.error?.details?.issues]).toEqual([400, [{ field: 'dependencies.0', issue: 'must not be a cancelled task' }]]);
    expect(await sqlAsOwner('select count(*)::int as n from tasks where project_id = $1', [projectId])).toEqual(before);
  });
});
