import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { flowWalker, type FlowQuestion } from '../helpers/flow-walk.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let apiKey: string;
let orgId: string;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
let walk: ReturnType<typeof flowWalker>;
const post = (path: string, body: unknown) => walk.post(path, body);
const get = (path: string) => walk.get(path);
const newProject = (name: string, description?: string) => walk.newProject(name, description);
type Question = FlowQuestion;
const answer = (projectId: string, question: Pick<Question, 'id'>, value: unknown, extra: Record<string, unknown> = {}) => walk.answer(projectId, question.id, value, extra);

const discoveryAnswers: Record<string, unknown> = {
  problem: 'Small clinics lose bookings because patients cannot book online after hours.',
  audience: ['consumers', 'businesses'],
  platforms: ['web', 'ios'],
  capabilities: ['accounts', 'payments', 'scheduling'],
  entities: 'clinic, patient, appointment, invoice',
  multiTenant: true,
  integrations: 'Stripe, Google Calendar',
  compliance: ['gdpr', 'hipaa'],
  scale: 'medium',
};

const answerPhase = (projectId: string, answers: Record<string, unknown>) => walk.answerPhase(projectId, answers);

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '5000' } });
  apiKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  walk = flowWalker(app, apiKey, orgId);
});

afterAll(() => app?.stop());

describe('a project walks its flow', () => {
  it('starts in discovery with its first question, prefilled from the description', async () => {
    const projectId = await newProject('Clinic bookings', 'Online booking for small clinics');
    const started = await post('/flow/start', { projectId });
    expect(started.status, started.text).toBe(200);
    expect(started.body.data).toMatchObject({ projectId, phase: 'DISCOVERY', totalQuestions: 9 });
    expect(started.body.data.firstQuestion).toMatchObject({
      key: 'problem',
      phase: 'DISCOVERY',
      answerType: 'text',
      required: true,
      variants: [{ type: 'original' }, { type: 'simplified' }],
      prefill: { value: 'Online booking for small clinics', confidence: 0.6, source: 'project.description' },
    });
    const project = await get(`/projects/${projectId}`);
    expect(project.body.data).toMatchObject({ phase: 'DISCOVERY', discoveryCompletedAt: null });
    expect(project.body.data.discoveryStartedAt).not.toBeNull();

    const again = await post('/flow/start', { projectId });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
  });

  it('goes from discovery to specification, each phase gated by its readiness', async () => {
    const projectId = await newProject('Clinic bookings end to end');
    await post('/flow/start', { projectId });

    const notReady = await post('/flow/transition', { projectId, targetPhase: 'FEATURE_SELECTION' });
    expect(notReady.status).toBe(400);
    expect(notReady.body.error.code).toBe('READINESS_FAILED');
    expect(notReady.body.error.details.blockers.map((blocker: { type: string }) => blocker.type)).toContain('unanswered_question');
    expect((await get(`/projects/${projectId}`)).body.data.phase).toBe('DISCOVERY');

    await answerPhase(projectId, discoveryAnswers);
    const ready = await get(`/flow/readiness/${projectId}`);
    expect(ready.body.data).toMatchObject({ currentPhase: 'DISCOVERY', readinessScore: 1, threshold: 0.8, isReady: true, blockers: [] });

    const afterDiscovery = (await get(`/projects/${projectId}`)).body.data;
    expect(afterDiscovery.ontologyCoverage).toBe(1);
    expect(afterDiscovery.progress.byPhase.discovery).toBe(1);
    expect(afterDiscovery.discoveryOutput.answers).toMatchObject({ scale: 'medium', multiTenant: true });
    expect(afterDiscovery.discoveryOutput.ontology).toContainEqual({ type: 'entity', name: 'appointment', confidence: 1 });

    const toFeatures = await post('/flow/transition', { projectId, targetPhase: 'FEATURE_SELECTION' });
    expect(toFeatures.status, toFeatures.text).toBe(200);
    expect(toFeatures.body.data).toMatchObject({ previousPhase: 'DISCOVERY', currentPhase: 'FEATURE_SELECTION', entryActions: { patternsMatched: 0, questionsSupressed: 0 } });
    // sign-in, checkout, invoices, bookings, mobile-app, organizations, audit-log, and one per entity.
    expect(toFeatures.body.data.entryActions.featureCandidatesGenerated).toBe(11);

    const featureQuestion: Question = (await post('/flow/get-next-question', { projectId })).body.data.question;
    expect(featureQuestion.key).toBe('features');
    expect(featureQuestion.options.map((option) => option.value)).toEqual([
      'sign-in', 'checkout', 'invoices', 'bookings', 'mobile-app', 'organizations', 'audit-log', 'manage-clinic', 'manage-patient', 'manage-appointment', 'manage-invoice',
    ]);
    const answered = await answer(projectId, featureQuestion, ['bookings', 'sign-in', 'checkout']);
    expect(answered.nextQuestion.key).toBe('firstFeature');
    expect(answered.effects.prefillCascades).toEqual([{ questionId: answered.nextQuestion.id, newConfidence: 0.5 }]);
    expect(answered.nextQuestion.prefill.value).toBe('bookings');
    await answerPhase(projectId, {});
    expect((await get(`/projects/${projectId}`)).body.data.selectedFeatures).toEqual([
      { key: 'bookings', name: 'Calendar and bookings' },
      { key: 'sign-in', name: 'Sign-in and user profiles' },
      { key: 'checkout', name: 'Checkout and payments' },
    ]);

    const toPlan = await post('/flow/transition', { projectId, targetPhase: 'PLAN_GENERATION' });
    expect(toPlan.status, toPlan.text).toBe(200);
    // multi-tenant-saas, mobile-backend, payments, regulated-data.
    expect(toPlan.body.data.entryActions).toEqual({ featureCandidatesGenerated: 0, patternsMatched: 4, questionsSupressed: 0 });
    const architecture: Question = (await post('/flow/get-next-question', { projectId })).body.data.question;
    expect(architecture).toMatchObject({ key: 'architecture', prefill: { value: 'modular_monolith', confidence: 0.9 } });
    await answerPhase(projectId, { timeline: 'quarter', teamSize: 4 });

    // Each phase's questions are answered (with its prefills where no answer is given), then the flow moves on.
    for (const [target, answers] of [
      ['PLANNING', {}],
      ['VISUAL_DISCOVERY', { releaseStrategy: 'phased' }],
      ['SPECIFICATION', { visualStyle: 'minimal', brandColors: '#0a5, white' }],
    ] as const) {
      await answerPhase(projectId, answers);
      const moved = await post('/flow/transition', { projectId, targetPhase: target });
      expect(moved.status, moved.text).toBe(200);
      expect(moved.body.data.currentPhase).toBe(target);
    }
    await answerPhase(projectId, {});
    const finished = (await get(`/projects/${projectId}`)).body.data;
    expect(finished).toMatchObject({ phase: 'SPECIFICATION', progress: { overall: 1 } });
    expect(finished.featureSelectionCompletedAt).not.toBeNull();
    expect(finished.planGenerationStartedAt).not.toBeNull();

    const pastTheEnd = await post('/flow/transition', { projectId, targetPhase: 'SPECIFICATION' });
    expect(pastTheEnd.status).toBe(400);
    expect(pastTheEnd.body.error.code).toBe('PHASE_INVALID');
  });

  it('skips visual design for an API-only product', async () => {
    const projectId = await newProject('Rates API');
    await post('/flow/start', { projectId });
    await answerPhase(projectId, { ...discoveryAnswers, platforms: ['api'] });
    for (const target of ['FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING']) {
      expect((await post('/flow/transition', { projectId, targetPhase: target, force: true })).status).toBe(200);
    }
    await answerPhase(projectId, { milestones: 'API\nLaunch', releaseStrategy: 'beta_first' });
    const visual = await post('/flow/transition', { projectId, targetPhase: 'VISUAL_DISCOVERY' });
    expect(visual.body.data.entryActions.questionsSupressed).toBe(3);
    const next = await post('/flow/get-next-question', { projectId });
    expect(next.body.data).toEqual({ question: null, progress: { answered: 0, total: 0, percent: 100 }, isLastQuestion: false });
    expect((await get(`/flow/readiness/${projectId}`)).body.data).toMatchObject({ readinessScore: 1, isReady: true });
  });
});

describe('what a project was asked', () => {
  it('lists every question of every phase entered, in order, with its whole answer; a phase narrows it', async () => {
    const projectId = await newProject('Asked and told');
    expect((await get(`/flow/questions/${projectId}`)).body.data).toEqual({ projectId, currentPhase: 'CREATED', questions: [] });
    const first: Question = (await post('/flow/start', { projectId })).body.data.firstQuestion;
    await answer(projectId, first, 'Clinics lose bookings after hours', { confidence: 0.7, notes: 'From the kickoff call', selectedVariant: 'simplified' });
    await post('/flow/transition', { projectId, targetPhase: 'FEATURE_SELECTION', force: true });

    const all = await get(`/flow/questions/${projectId}`);
    expect(all.status, all.text).toBe(200);
    expect(all.body.data.currentPhase).toBe('FEATURE_SELECTION');
    expect(all.body.data.questions.map((question: { key: string }) => question.key)).toEqual([
      'problem', 'audience', 'platforms', 'capabilities', 'entities', 'multiTenant', 'integrations', 'compliance', 'scale', 'features', 'firstFeature',
    ]);
    const [problem] = all.body.data.questions;
    expect(problem.answer).toEqual({
      id: expect.any(String),
      value: 'Clinics lose bookings after hours',
      selectedVariant: 'simplified',
      confidence: 0.7,
      notes: 'From the kickoff call',
      answeredBy: app.bootstrap.userId,
      answeredAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    // Forced past discovery with no answer to derive candidates from: the feature questions are not asked.
    expect(all.body.data.questions.slice(-2).map((question: { suppressed: boolean; answer: unknown }) => [question.suppressed, question.answer])).toEqual([[true, null], [true, null]]);

    const discovery = await get(`/flow/questions/${projectId}?phase=DISCOVERY`);
    expect(discovery.body.data.questions).toHaveLength(9);
    const wrong = await get(`/flow/questions/${projectId}?phase=LATER`);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details.issues[0].field).toBe('phase');
  });
});

describe('answers', () => {
  it('are checked against their question, and a refused one changes nothing', async () => {
    const projectId = await newProject('Checked answers');
    await post('/flow/start', { projectId });
    const questions = await sqlAsOwner('select id, key from flow_questions where project_id = $1', [projectId]);
    const id = (key: string) => questions.find((row: { key: string }) => row.key === key).id;
    for (const [key, value, message] of [
      ['problem', '   ', 'must not be empty'],
      ['problem', ['a'], 'must be a string'],
      ['scale', 'huge', 'must be one of: small, medium, large'],
      ['audience', [], 'must name at least one option'],
      ['audience', ['consumers', 'consumers'], 'names an option more than once'],
      ['audience', ['martians'], 'names values that are not options'],
      ['compliance', ['none', 'gdpr'], 'cannot name "none" beside other options'],
      ['multiTenant', 'yes', 'must be true or false'],
    ] as const) {
      const refused = await post('/flow/answer-question', { projectId, questionId: id(key), answer: { value } });
      expect(refused.status, `${key} ${JSON.stringify(value)}`).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_ERROR');
      expect(refused.body.error.message).toContain(message);
    }
    expect(await countRows(app.database.ownerUrl, 'flow_answers where project_id = $1', [projectId])).toBe(0);

    const unknown = await post('/flow/answer-question', { projectId, questionId: '00000000-0000-4000-8000-000000000000', answer: { value: 'x' } });
    expect(unknown.status).toBe(404);
    const missing = await post('/flow/answer-question', { projectId, questionId: id('problem'), answer: {} });
    expect(missing.body.error.details.issues).toEqual([{ field: 'answer.value', issue: 'is required' }]);
    const object = await post('/flow/answer-question', { projectId, questionId: id('problem'), answer: { value: { text: 'x' } } });
    expect(object.body.error.details.issues[0].issue).toContain('must be a string');
    const extra = await post('/flow/answer-question', { projectId, questionId: id('problem'), answer: { value: 'x', phase: 'SPECIFICATION' } });
    expect(extra.status).toBe(400);
  });

  it('replace the earlier answer and keep its id; a low confidence one is warned about', async () => {
    const projectId = await newProject('Replaced answers');
    const question: Question = (await post('/flow/start', { projectId })).body.data.firstQuestion;
    const first = await answer(projectId, question, 'Too short');
    expect(first.effects.suggestions).toEqual(['Say more about the problem: every later phase builds on this answer.']);
    expect(first.effects.ontologyUpdates).toEqual([{ type: 'goal', name: 'Too short', confidence: 1 }]);
    const second = await answer(projectId, question, 'A much longer statement of what is wrong today', { confidence: 0.3 });
    expect(second.answerId).toBe(first.answerId);
    expect(second.effects.suggestions).toEqual([]);
    const rows = await sqlAsOwner('select value, confidence from flow_answers where project_id = $1', [projectId]);
    expect(rows).toEqual([{ value: 'A much longer statement of what is wrong today', confidence: 0.3 }]);
    const readiness = (await get(`/flow/readiness/${projectId}`)).body.data;
    expect(readiness.warnings).toContainEqual(expect.objectContaining({ type: 'low_confidence_answer', count: 1 }));
    expect(readiness.isReady).toBe(false);
  });

  it('withdraw the guess an earlier answer of theirs raised, and only that one', async () => {
    const projectId = await newProject('Withdrawn guesses');
    await post('/flow/start', { projectId });
    const questions = await sqlAsOwner('select id, key from flow_questions where project_id = $1', [projectId]);
    const question = (key: string): Question => ({ id: questions.find((row: { key: string }) => row.key === key).id, key, answerType: '', options: [], prefill: null });
    const prefillOf = async (key: string) => (await sqlAsOwner('select prefill from flow_questions where id = $1', [question(key).id]))[0].prefill;

    const businesses = await answer(projectId, question('audience'), ['businesses']);
    expect(businesses.effects.prefillCascades).toEqual([{ questionId: question('multiTenant').id, newConfidence: 0.6 }]);
    expect(await prefillOf('multiTenant')).toMatchObject({ value: true, source: 'discovery.audience' });
    const consumers = await answer(projectId, question('audience'), ['consumers']);
    expect(consumers.effects.prefillCascades).toEqual([{ questionId: question('multiTenant').id, newConfidence: 0 }]);
    expect(await prefillOf('multiTenant')).toBeNull();
    // Nothing left to withdraw: the answer says no cascade.
    expect((await answer(projectId, question('audience'), ['staff'])).effects.prefillCascades).toEqual([]);
  });

  it('name the most important feature among those selected', async () => {
    const projectId = await newProject('First among the selected');
    await post('/flow/start', { projectId });
    await answerPhase(projectId, discoveryAnswers);
    await post('/flow/transition', { projectId, targetPhase: 'FEATURE_SELECTION' });
    const features: Question = (await post('/flow/get-next-question', { projectId })).body.data.question;
    const first: Question = (await answer(projectId, features, ['bookings', 'sign-in'])).nextQuestion;
    expect(first.options.map((option) => option.value)).toContain('checkout');
    const refused = await post('/flow/answer-question', { projectId, questionId: first.id, answer: { value: 'checkout' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.issues).toEqual([{ field: 'answer.value', issue: 'must be one of the selected features: bookings, sign-in' }]);
    expect(await countRows(app.database.ownerUrl, 'flow_answers where question_id = $1', [first.id])).toBe(0);
    expect((await answer(projectId, first, 'sign-in')).nextQuestion).toBeNull();
  });

  it('name "API only" alone, and a phase is ready once its required questions are answered', async () => {
    const projectId = await newProject('Only what is required');
    await post('/flow/start', { projectId });
    const questions = await sqlAsOwner('select id, key, required from flow_questions where project_id = $1', [projectId]);
    const platforms = questions.find((row: { key: string }) => row.key === 'platforms');
    const both = await post('/flow/answer-question', { projectId, questionId: platforms.id, answer: { value: ['web', 'api'] } });
    expect(both.status).toBe(400);
    expect(both.body.error.message).toContain('cannot name "api" beside other options');
    for (const { id, key, required } of questions) if (required) await answer(projectId, { id, key } as Question, key === 'platforms' ? ['api'] : discoveryAnswers[key]);
    expect((await get(`/flow/readiness/${projectId}`)).body.data).toMatchObject({ isReady: true, blockers: [] });
  });

  it('of an earlier phase are settled', async () => {
    const projectId = await newProject('Settled answers');
    const question: Question = (await post('/flow/start', { projectId })).body.data.firstQuestion;
    await post('/flow/transition', { projectId, targetPhase: 'FEATURE_SELECTION', force: true });
    const late = await post('/flow/answer-question', { projectId, questionId: question.id, answer: { value: 'Late answer' } });
    expect(late.status).toBe(409);
    expect(late.body.error.message).toContain('belongs to phase DISCOVERY');
  });
});

describe('transitions', () => {
  it('move one phase forward only, and not before the flow starts', async () => {
    const projectId = await newProject('One step at a time');
    const early = await post('/flow/transition', { projectId, targetPhase: 'FEATURE_SELECTION' });
    expect(early.status).toBe(409);
    expect((await get(`/flow/readiness/${projectId}`)).body.data).toMatchObject({ currentPhase: 'CREATED', isReady: false, blockers: [{ type: 'flow_not_started' }] });
    await post('/flow/start', { projectId });
    const skip = await post('/flow/transition', { projectId, targetPhase: 'PLANNING', force: true });
    expect(skip.status).toBe(400);
    expect(skip.body.error).toMatchObject({ code: 'PHASE_INVALID', details: { currentPhase: 'DISCOVERY', allowedTargetPhase: 'FEATURE_SELECTION' } });
    const back = await post('/flow/transition', { projectId, targetPhase: 'DISCOVERY' });
    expect(back.status).toBe(400);
    expect(back.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('refuse an archived project, and its phase stays', async () => {
    const projectId = await newProject('Archived flow');
    await post('/flow/start', { projectId });
    expect((await call(app.url, `/api/projects/${projectId}`, { apiKey, method: 'PATCH', body: { status: 'archived' } })).status).toBe(200);
    const moved = await post('/flow/transition', { projectId, targetPhase: 'FEATURE_SELECTION', force: true });
    expect(moved.status).toBe(409);
    expect(moved.body.error.message).toContain('archived');
    expect((await get(`/projects/${projectId}`)).body.data.phase).toBe('DISCOVERY');
  });
});

describe('deleting a project', () => {
  it('takes its questions and answers with it and counts them', async () => {
    const projectId = await newProject('Deleted with its flow');
    const question: Question = (await post('/flow/start', { projectId })).body.data.firstQuestion;
    await answer(projectId, question, 'Something worth deleting');
    const deleted = await call(app.url, `/api/projects/${projectId}`, { apiKey, method: 'DELETE' });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body.data).toMatchObject({ deletedTables: ['flow_answers', 'flow_questions', 'projects'], rowsDeleted: 1 + 9 + 1 });
    expect(await countRows(app.database.ownerUrl, 'flow_questions where project_id = $1', [projectId])).toBe(0);
  });
});
