import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { countRows } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Inputs a task and a submission refuse as VALIDATION_ERROR naming the field (never a 500), storing
 * nothing: a due date PostgreSQL cannot store, data that leans on Object.prototype for a required
 * field, data that would grow past its cap once stored as jsonb.
 */
let app: TestApp;
let apiKey: string;
let walk: ReturnType<typeof flowWalker>;

const post = (path: string, body: unknown) => call(app.url, `/api${path}`, { apiKey, body });
const choose = { type: 'SINGLE_SELECT', label: 'Pick', config: { options: [{ value: 'postgres', label: 'PostgreSQL' }] } };
const refusal = (response: { status: number; body: any; text: string }) => [response.status, response.body.error?.code, response.body.error?.details?.issues?.[0]?.field];

async function newTask(projectId: string, actions: unknown[]) {
  const created = await post('/tasks', { projectId, type: 'PROVIDE', title: 'Provide', description: 'Something', actions });
  expect(created.status, created.text).toBe(201);
  return created.body.data as { id: string };
}

beforeAll(async () => {
  app = await startTestApp();
  apiKey = app.bootstrap.apiKey;
  walk = flowWalker(app, apiKey, app.bootstrap.organizationId);
}, 120_000);
afterAll(() => app?.stop());

describe('a due date', () => {
  it('that PostgreSQL cannot store is VALIDATION_ERROR on dueDate, and no task is made', async () => {
    const projectId = await walk.newProject('Due dates');
    for (const dueDate of ['0000-06-01T00:00:00Z', '2026-01-01T00:00:00+23:59', '2026-01-01T00:00:00-16:00', '9999-12-31T23:30:00-01:00']) {
      const response = await post('/tasks', { projectId, type: 'DECIDE', title: 'T', description: 'D', actions: [choose], dueDate });
      expect(refusal(response), `${dueDate}: ${response.text}`).toEqual([400, 'VALIDATION_ERROR', 'dueDate']);
    }
    expect(await countRows(app.database.ownerUrl, 'tasks where project_id = $1', [projectId])).toBe(0);
    const edge = await post('/tasks', { projectId, type: 'DECIDE', title: 'T', description: 'D', actions: [choose], dueDate: '2026-03-01T09:00:00+14:00' });
    expect([edge.status, edge.body.data?.dueDate]).toEqual([201, '2026-02-28T19:00:00.000Z']);
  });
});

describe("a form's data", () => {
  it('gives a required field only by its own key, not one Object.prototype has', async () => {
    const projectId = await walk.newProject('Prototype fields');
    const task = await newTask(projectId, [{ type: 'FORM_SUBMIT', label: 'F', config: { fields: [{ name: 'constructor', required: true }, { name: 'toString' }] } }]);
    const empty = await post(`/tasks/${task.id}/actions/a1`, { data: {} });
    expect(refusal(empty), empty.text).toEqual([400, 'VALIDATION_ERROR', 'data.constructor']);
    expect(await countRows(app.database.ownerUrl, 'task_submissions where task_id = $1', [task.id])).toBe(0);
    const given = await post(`/tasks/${task.id}/actions/a1`, { data: { constructor: 'acct_1' } });
    expect(given.body.data?.effects.outputBindings, given.text).toEqual([{ field: 'constructor', value: 'acct_1' }]);
  });
});

describe("a submission's data", () => {
  it('over 64 KiB as stored jsonb writes it is VALIDATION_ERROR on data, and nothing changes', async () => {
    const projectId = await walk.newProject('Big data');
    const task = await newTask(projectId, [{ type: 'FORM_SUBMIT', label: 'F', config: { fields: [{ name: 'values' }] } }]);
    // 200 KB in the body; 1e308 is stored as 309 digits: some 21 MB in the table.
    const big = await post(`/tasks/${task.id}/actions/a1`, { data: { values: Array.from({ length: 35_000 }, () => 1e308) } });
    expect(refusal(big), big.text.slice(0, 300)).toEqual([400, 'VALIDATION_ERROR', 'data']);
    const missing = await post(`/tasks/${task.id}/actions/a1`, {});
    expect(refusal(missing), missing.text).toEqual([400, 'VALIDATION_ERROR', 'data']);
    expect(await countRows(app.database.ownerUrl, "tasks where id = $1 and status = 'pending'", [task.id])).toBe(1);
    const fits = await post(`/tasks/${task.id}/actions/a1`, { data: { values: 'x'.repeat(60_000) } });
    expect(fits.status, fits.text.slice(0, 300)).toBe(200);
  });
});
