import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * What a user sees of the flow's derivations over HTTP when the answers carry what people type:
 * "none" for integrations, names with a stray zero-width space or bidirectional mark, Chinese
 * commas, a description that shows nothing.
 */

let app: TestApp;
let apiKey: string;
let orgId: string;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const post = (path: string, body: unknown) => call(app.url, `/api${path}`, { apiKey, body });
const get = (path: string) => call(app.url, `/api${path}`, { apiKey });

beforeAll(async () => {
  app = await startTestApp();
  apiKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  walk = flowWalker(app, apiKey, orgId);
});
afterAll(() => app?.stop());

let walk: ReturnType<typeof flowWalker>;
const startedProject = (name: string, description?: string) => walk.startedProject(name, description);

const answer = (projectId: string, questionId: string, value: unknown) => post('/flow/answer-question', { projectId, questionId, answer: { value } });

describe('the flow over HTTP, with what people type', () => {
  it('a description that shows nothing is no guess at the problem, and an answer that shows nothing is refused like "   "', async () => {
    const { projectId, started, id } = await startedProject('Invisible description', '\u200b\u200d');
    expect(started.firstQuestion).toMatchObject({ key: 'problem', prefill: null });
    const refused = await answer(projectId, id('problem'), '\u200b\u202e');
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.error.code).toBe('VALIDATION_ERROR');
    expect(refused.body.error.message).toContain('must contain a visible character');
    expect((await sqlAsOwner('select count(*)::int as n from flow_answers where project_id = $1', [projectId]))[0].n).toBe(0);
  });

  it('integrations "none" are no integration; entities typed with stray invisible marks or Chinese commas are each one entity and one feature', async () => {
    const { projectId, id } = await startedProject('Typed by people');
    const answers: Record<string, unknown> = {
      problem: 'Small shops cannot see which customers ordered what.',
      audience: ['businesses'],
      platforms: ['web'],
      capabilities: ['accounts'],
      entities: 'Customer, Customer\u200b, \u200fCustomer\u200f; 顧客、注文',
      integrations: 'None',
    };
    // "none" is no entity: the product keeps track of something.
    const none = await answer(projectId, id('entities'), 'none');
    expect(none.status, none.text).toBe(400);
    expect(none.body.error.message).toContain('must name at least one thing');
    for (const [key, value] of Object.entries(answers)) {
      const answered = await answer(projectId, id(key), value);
      expect(answered.status, `${key}: ${answered.text}`).toBe(200);
      if (key === 'integrations') expect(answered.body.data.effects.ontologyUpdates).toEqual([]);
    }
    const ontology: Array<{ type: string; name: string }> = (await get(`/projects/${projectId}`)).body.data.discoveryOutput.ontology;
    expect(ontology.filter((item) => item.type === 'entity').map((item) => item.name)).toEqual(['Customer', '顧客', '注文']);
    expect(ontology.filter((item) => item.type === 'integration')).toEqual([]);

    const moved = await post('/flow/transition', { projectId, targetPhase: 'FEATURE_SELECTION' });
    expect(moved.status, moved.text).toBe(200);
    const question = (await post('/flow/get-next-question', { projectId })).body.data.question;
    expect(question.options).toEqual([
      { value: 'sign-in', label: 'Sign-in and user profiles' },
      { value: 'manage-customer', label: 'Manage Customer' },
      { value: 'manage-u9867-u5ba2', label: 'Manage 顧客' },
      { value: 'manage-u6ce8-u6587', label: 'Manage 注文' },
    ]);
  });
});
