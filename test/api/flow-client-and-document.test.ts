import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createSpecwrightClient, serviceErrorOf, type RouterOutputs, type SpecwrightClient } from '../../sdk/index.ts';
import { failureOf } from '../sdk/failure-of.ts';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';

/**
 * The flow as a user of the typed client and of the OpenAPI document meets it: what the client's
 * types promise is what arrives, a refusal carries its code and details, the document names every
 * failure an operation answers (and the ones it names happen), and the project shows each step.
 */
let app: TestApp;
let client: SpecwrightClient;
let customer: Actor;
let document: any;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const discoveryAnswers: Record<string, unknown> = {
  problem: 'Small clinics lose bookings because patients cannot book online after hours.',
  audience: ['consumers', 'businesses'],
  platforms: ['web'],
  capabilities: ['accounts', 'scheduling'],
  entities: 'clinic, patient, appointment',
  multiTenant: true,
  integrations: 'Stripe',
  compliance: ['gdpr'],
  scale: 'small',
};

async function newProject(name: string): Promise<string> {
  const project = await client.projects.create.mutate({ name, organizationId: app.bootstrap.organizationId });
  return project.id;
}

/** Answers the current phase's questions, in order, with `answers[key]` or the prefill. */
async function answerPhase(projectId: string, answers: Record<string, unknown> = {}): Promise<void> {
  for (;;) {
    const { question } = await client.flow.nextQuestion.mutate({ projectId });
    if (!question) return;
    await client.flow.answerQuestion.mutate({ projectId, questionId: question.id, answer: { value: (answers[question.key] ?? question.prefill?.value) as string } });
  }
}

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
  customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Cora');
  await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [
    app.bootstrap.tenantId,
    app.bootstrap.organizationId,
    customer.userId,
  ]);
  document = (await call(app.url, '/api/openapi.json')).body;
});
afterAll(() => app?.stop());

describe('the typed client walks the flow', () => {
  it('gets what its types say: times as ISO strings, nulls where nullable', async () => {
    const projectId = await newProject('Typed flow');
    const started = await client.flow.start.mutate({ projectId });
    expectTypeOf(started.firstQuestion).toEqualTypeOf<RouterOutputs['flow']['start']['firstQuestion']>();
    expect(started).toMatchObject({ projectId, phase: 'DISCOVERY', totalQuestions: 9 });
    expect(started.firstQuestion?.bounds).toBeNull();

    const first = started.firstQuestion!;
    const answered = await client.flow.answerQuestion.mutate({ projectId, questionId: first.id, answer: { value: discoveryAnswers.problem as string } });
    expect(answered.processed).toBe(true);
    expect(answered.effects.tasksCreated).toEqual([]);

    const asked = await client.flow.questions.query({ projectId, phase: 'DISCOVERY' });
    const answer = asked.questions.find((question) => question.id === first.id)!.answer!;
    expectTypeOf(answer.answeredAt).toEqualTypeOf<string>();
    expectTypeOf(answer.notes).toEqualTypeOf<string | null>();
    expect(answer).toMatchObject({ id: answered.answerId, value: discoveryAnswers.problem, selectedVariant: null, confidence: null, notes: null, answeredBy: app.bootstrap.userId });
    expect(answer.answeredAt).toMatch(ISO);
    expect(answer.updatedAt).toBe(answer.answeredAt);
    expect(asked.questions.filter((question) => question.answer === null)).toHaveLength(8);

    await answerPhase(projectId, discoveryAnswers);
    const moved = await client.flow.transition.mutate({ projectId, targetPhase: 'FEATURE_SELECTION' });
    expectTypeOf(moved.transitionedAt).toEqualTypeOf<string>();
    expect(moved.transitionedAt).toMatch(ISO);
    const project = await client.projects.get.query({ projectId });
    expectTypeOf(project.discoveryCompletedAt).toEqualTypeOf<string | null>();
    expect(project.discoveryCompletedAt).toBe(moved.transitionedAt);
    expect(project.featureSelectionStartedAt).toBe(moved.transitionedAt);
    expect(project.featureSelectionCompletedAt).toBeNull();
  });

  it('names a refused transition by its code, with the details to act on', async () => {
    const projectId = await newProject('Refused transitions');
    await client.flow.start.mutate({ projectId });

    const notReady = serviceErrorOf(await failureOf(client.flow.transition.mutate({ projectId, targetPhase: 'FEATURE_SELECTION' })))!;
    expect(notReady).toMatchObject({ code: 'READINESS_FAILED', httpStatus: 400, path: 'flow.transition', issues: [] });
    expect(notReady.details).toMatchObject({ readinessScore: 0, threshold: 0.8 });
    expect((notReady.details!.blockers as unknown[]).length).toBeGreaterThan(0);

    const skipping = serviceErrorOf(await failureOf(client.flow.transition.mutate({ projectId, targetPhase: 'PLANNING' })))!;
    expect(skipping).toMatchObject({ code: 'PHASE_INVALID', httpStatus: 400, details: { currentPhase: 'DISCOVERY', allowedTargetPhase: 'FEATURE_SELECTION' } });
  });
});

describe('the most important feature stays one of those selected', () => {
  it('refuses a new selection that leaves out the feature already chosen as the most important, and keeps the old one', async () => {
    const projectId = await newProject('Selection kept whole');
    await client.flow.start.mutate({ projectId });
    await answerPhase(projectId, discoveryAnswers);
    await client.flow.transition.mutate({ projectId, targetPhase: 'FEATURE_SELECTION' });
    const asked = (await client.flow.questions.query({ projectId, phase: 'FEATURE_SELECTION' })).questions;
    const features = asked.find((question) => question.key === 'features')!;
    const firstFeature = asked.find((question) => question.key === 'firstFeature')!;
    await client.flow.answerQuestion.mutate({ projectId, questionId: features.id, answer: { value: ['sign-in', 'bookings'] } });
    await client.flow.answerQuestion.mutate({ projectId, questionId: firstFeature.id, answer: { value: 'bookings' } });

    // Selecting again without "bookings" would leave the most important feature outside the selection.
    const refused = serviceErrorOf(await failureOf(client.flow.answerQuestion.mutate({ projectId, questionId: features.id, answer: { value: ['sign-in', 'organizations'] } })))!;
    expect(refused.code).toBe('VALIDATION_ERROR');
    expect(refused.issues).toEqual([{ field: 'answer.value', issue: expect.stringContaining('bookings') }]);
    expect((await client.projects.get.query({ projectId })).selectedFeatures).toMatchObject([{ key: 'sign-in' }, { key: 'bookings' }]);
    const stored = (await client.flow.questions.query({ projectId, phase: 'FEATURE_SELECTION' })).questions;
    expect(stored.find((question) => question.key === 'features')!.answer!.value).toEqual(['sign-in', 'bookings']);

    // Naming another most important feature first lets the selection change.
    await client.flow.answerQuestion.mutate({ projectId, questionId: firstFeature.id, answer: { value: 'sign-in' } });
    await client.flow.answerQuestion.mutate({ projectId, questionId: features.id, answer: { value: ['sign-in', 'organizations'] } });
    expect((await client.projects.get.query({ projectId })).selectedFeatures).toMatchObject([{ key: 'sign-in' }, { key: 'organizations' }]);
  });
});

type Operation = { summary: string; parameters?: Array<{ in: string; name: string; description?: string; schema: { enum?: string[]; description?: string } }>; responses: Record<string, { description: string; content?: any }> };
const operation = (method: string, path: string): Operation => document.paths[path][method];
const dataSchemaOf = (method: string, path: string) => operation(method, path).responses['200']!.content['application/json'].schema.properties.data;

describe('the OpenAPI document of the flow', () => {
  it("documents POST /flow/transition's 400 as what the service answers: VALIDATION_ERROR as well as READINESS_FAILED and PHASE_INVALID", async () => {
    const projectId = await newProject('Transition refusals on the wire');
    await client.flow.start.mutate({ projectId });
    const outcomes = [];
    for (const body of [{ projectId, targetPhase: 'NEXT' }, { projectId, targetPhase: 'FEATURE_SELECTION' }, { projectId, targetPhase: 'PLANNING' }]) {
      const answered = await call(app.url, '/api/flow/transition', { apiKey: app.bootstrap.apiKey, body });
      outcomes.push(`${answered.status} ${answered.body.error.code}`);
    }
    expect(outcomes).toEqual(['400 VALIDATION_ERROR', '400 READINESS_FAILED', '400 PHASE_INVALID']);
    const documented = operation('post', '/flow/transition').responses['400']!.description;
    for (const code of ['VALIDATION_ERROR', 'READINESS_FAILED', 'PHASE_INVALID']) expect(documented).toContain(code);
  });

  it('says who gets 403 on starting and moving a flow, as the service answers it', async () => {
    const projectId = await newProject('Customer at the start');
    const assigned = await call(app.url, '/api/agency-projects', {
      apiKey: app.bootstrap.apiKey,
      body: { organizationId: app.bootstrap.organizationId, projectId, customerUserId: customer.userId },
    });
    expect(assigned.status, assigned.text).toBe(201);
    const refused = await call(app.url, '/api/flow/start', { apiKey: customer.apiKey, body: { projectId } });
    expect(`${refused.status} ${refused.body.error.code}`).toBe('403 FORBIDDEN');
    await client.flow.start.mutate({ projectId });
    const moved = await call(app.url, '/api/flow/transition', { apiKey: customer.apiKey, body: { projectId, targetPhase: 'FEATURE_SELECTION', force: true } });
    expect(`${moved.status} ${moved.body.error.code}`).toBe('403 FORBIDDEN');

    expect(operation('post', '/flow/start').responses['403']!.description).toMatch(/customer/i);
    expect(operation('post', '/flow/transition').responses['403']!.description).toMatch(/customer/i);
    expect(operation('post', '/flow/transition').responses['403']!.description).toMatch(/force/);
  });

  it('documents the phase query parameter of GET /flow/questions/{projectId}, with its values and what it does', async () => {
    const phase = operation('get', '/flow/questions/{projectId}').parameters!.find((parameter) => parameter.in === 'query' && parameter.name === 'phase')!;
    expect(phase.schema.enum).toEqual(['DISCOVERY', 'FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY', 'SPECIFICATION']);
    // The generator leaves a query parameter's description in its schema (projects' `status` too).
    expect(phase.description ?? phase.schema.description).toMatch(/Only this phase's questions/);
    // Suppressed questions are listed too: they were put on the project, not asked.
    expect(operation('get', '/flow/questions/{projectId}').summary).toMatch(/suppressed/);
  });

  it('gives a transition a previousPhase only of the phases a flow leaves (never CREATED: POST /flow/start leaves it)', async () => {
    expect(dataSchemaOf('post', '/flow/transition').properties.previousPhase.enum).toEqual(['DISCOVERY', 'FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY']);
    expect(dataSchemaOf('post', '/flow/transition').properties.entryActions.required).toContain('questionsSupressed');
    const answerValue = dataSchemaOf('get', '/flow/questions/{projectId}').properties.questions.items.properties.answer.anyOf[0].properties.value;
    expect(answerValue.anyOf.map((schema: { type: string }) => schema.type)).toEqual(['string', 'array', 'boolean', 'number']);
  });
});

describe('what the project shows after each step of its flow', () => {
  it('moves progress (list and detail alike), overall and updatedAt with every answer and transition', async () => {
    const projectId = await newProject('Progress step by step');
    const shown = async () => {
      const detail = await client.projects.get.query({ projectId });
      const listed = (await client.projects.list.query({ limit: 200 })).projects.find((project) => project.id === projectId)!;
      const { overall, ...byPhase } = listed.progress;
      expect(detail.progress).toEqual({ overall, byPhase });
      expect(Math.abs(overall - Object.values(byPhase).reduce((sum, share) => sum + share, 0) / 6)).toBeLessThanOrEqual(0.0005 + 1e-9);
      expect(listed.updatedAt).toBe(detail.updatedAt);
      return detail;
    };
    let before = await shown();
    await client.flow.start.mutate({ projectId });
    for (let answered = 1; ; answered += 1) {
      const { question, progress } = await client.flow.nextQuestion.mutate({ projectId });
      if (!question) break;
      await client.flow.answerQuestion.mutate({ projectId, questionId: question.id, answer: { value: (discoveryAnswers[question.key] ?? question.prefill?.value) as string } });
      const after = await shown();
      expect(after.progress.byPhase.discovery).toBe(Math.round((answered / progress.total) * 1000) / 1000);
      expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
      before = after;
    }
    const moved = await client.flow.transition.mutate({ projectId, targetPhase: 'FEATURE_SELECTION' });
    const after = await shown();
    expect(after).toMatchObject({ phase: 'FEATURE_SELECTION', updatedAt: moved.transitionedAt, discoveryCompletedAt: moved.transitionedAt });
    expect(after.progress.byPhase).toMatchObject({ discovery: 1, featureSelection: 0 });
  });
});
