import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, ProjectRow } from '../../db/database.ts';
import { AppError, conflict, forbidden, invalid, notFound } from '../../errors/app-error.ts';
import { atLeast } from '../organizations/organization-access.ts';
import { requireProjectMember } from '../projects/project-member.ts';
import { requireProjectForCaller } from '../projects/project-for-caller.ts';
import { answerFitsQuestion } from './answer-fits-question.ts';
import type { AnswerValue } from './flow-catalogue.ts';
import { cascadesOf, ontologyCoverage, ontologyOf, suggestionsFor, type AnswersByKey } from './flow-derivations.ts';
import { alignTasksWithAnswer } from '../tasks/tasks-from-answers.ts';
import { taskOriginPrefixOf, tasksFromAnswer } from './flow-tasks.ts';
import { phaseAfter, progressKeyOf, type FlowPhase } from './flow-phases.ts';
import { answersByKey, enterPhase, firstUnanswered, questionToOutput } from './flow-questions.ts';
import { phaseProgress, readinessOf } from './flow-readiness.ts';
import { listQuestions, saveAnswer, setPrefill, updateProjectFlow, type QuestionWithAnswer } from './flow.repository.ts';
import type { AnswerQuestionInput, TransitionInput } from './flow.schema.ts';

/** Whether the flow of an archived or completed project may move: it may not. */
function requireActive(project: ProjectRow): void {
  if (project.status !== 'active') throw conflict(`The project is ${project.status}; set its status to active to continue its flow`);
}

/**
 * Starting and moving a flow is for the organization's members, admins and owners (and a platform
 * admin acting in the tenant); a customer answers questions but does not move phases. Answers
 * whether the caller may also force a move (admins and owners).
 */
async function requireFlowMover(db: Kysely<Database>, principal: Principal, project: ProjectRow): Promise<{ mayForce: boolean }> {
  const role = await requireProjectMember(db, principal, project, 'moves its flow');
  return { mayForce: role === null || atLeast(role, 'admin') };
}

function currentFlowPhase(project: ProjectRow): FlowPhase {
  if (project.phase === 'CREATED') throw conflict('The flow has not started: POST /flow/start begins discovery');
  return project.phase;
}

/** `progress` with one phase's answered share (to three decimals) in its place. */
const progressWith = (progress: ProjectRow['progress'], phase: FlowPhase, share: number) => ({ ...progress, [progressKeyOf[phase]]: Math.round(share * 1000) / 1000 });

export async function startFlow(db: Kysely<Database>, principal: Principal, projectId: string) {
  const project = await requireProjectForCaller(db, principal, projectId, { lock: 'update' });
  await requireFlowMover(db, principal, project);
  requireActive(project);
  if (project.phase !== 'CREATED') throw conflict(`The flow has started already: the project is in phase ${project.phase}`);
  // A project that has not started has no question yet.
  const { questions } = await enterPhase(db, project, 'DISCOVERY', []);
  const progress = phaseProgress(questions);
  await updateProjectFlow(db, project.tenant_id, project.id, { phase: 'DISCOVERY', started: 'discovery_started_at', progress: progressWith(project.progress, 'DISCOVERY', progress.share) });
  const first = firstUnanswered(questions);
  return { projectId: project.id, phase: 'DISCOVERY' as const, firstQuestion: first ? questionToOutput(first) : null, totalQuestions: progress.total };
}

function nextOf(questions: QuestionWithAnswer[]) {
  const progress = phaseProgress(questions);
  const next = firstUnanswered(questions);
  return {
    question: next ? questionToOutput(next) : null,
    progress: { answered: progress.answered, total: progress.total, percent: Math.floor(progress.share * 100) },
    isLastQuestion: next !== undefined && progress.total - progress.answered === 1,
  };
}

export async function nextQuestion(db: Kysely<Database>, principal: Principal, projectId: string) {
  const project = await requireProjectForCaller(db, principal, projectId);
  const phase = currentFlowPhase(project);
  return nextOf(await listQuestions(db, project.tenant_id, project.id, phase));
}

/** Every question the flow put on the project (or one phase's), each with its answer: what the project was asked and told. */
export async function projectQuestions(db: Kysely<Database>, principal: Principal, projectId: string, phase: FlowPhase | undefined) {
  const project = await requireProjectForCaller(db, principal, projectId);
  const questions = await listQuestions(db, project.tenant_id, project.id, phase);
  return {
    projectId: project.id,
    currentPhase: project.phase,
    questions: questions.map((question) => ({
      ...questionToOutput({ ...question, answer: null }),
      suppressed: question.suppressed,
      answer: question.answer && {
        id: question.answer.id,
        value: question.answer.value,
        selectedVariant: question.answer.selected_variant,
        confidence: question.answer.confidence,
        notes: question.answer.notes,
        answeredBy: question.answer.answered_by,
        answeredAt: question.answer.created_at.toISOString(),
        updatedAt: question.answer.updated_at.toISOString(),
      },
    })),
  };
}

export async function readiness(db: Kysely<Database>, principal: Principal, projectId: string) {
  const project = await requireProjectForCaller(db, principal, projectId);
  if (project.phase === 'CREATED') return readinessOf('CREATED', []);
  return readinessOf(project.phase, await listQuestions(db, project.tenant_id, project.id, project.phase));
}

/**
 * Stores an answer to a question of the current phase (answering again replaces it) and applies
 * what follows from it: prefills it raises on unanswered questions, the project's progress, and in
 * discovery its discovery output and ontology coverage, in feature selection its selected features.
 */
export async function answerQuestion(db: Kysely<Database>, principal: Principal, input: AnswerQuestionInput) {
  const project = await requireProjectForCaller(db, principal, input.projectId, { lock: 'update' });
  requireActive(project);
  const phase = currentFlowPhase(project);
  // The project's questions are read once before the answer (to check it) and once after (what follows from it).
  const before = await listQuestions(db, project.tenant_id, project.id);
  const question = before.find((candidate) => candidate.id === input.questionId);
  if (!question) throw notFound('The question');
  if (question.phase !== phase) throw conflict(`The question belongs to phase ${question.phase} and the project is in phase ${phase}: only the current phase's questions are answered`);
  if (question.suppressed) throw conflict(`The question "${question.key}" is not asked: earlier answers made it moot`);
  const value = answerFitsQuestion(question, input.answer.value);
  requireFeatureAnswersAgree(question.key, value, answersByKey(before.filter((candidate) => candidate.phase === 'FEATURE_SELECTION')));
  const confidence = input.answer.confidence ?? null;
  // A platform admin acting in another tenant is no user of it: the answer (and the tasks it makes) names no one.
  const answeredBy = principal.tenantId === principal.homeTenantId ? principal.userId : null;
  const answerId = await saveAnswer(db, {
    tenantId: project.tenant_id,
    projectId: project.id,
    questionId: question.id,
    value,
    selectedVariant: input.answer.selectedVariant ?? null,
    confidence,
    notes: input.answer.notes ?? null,
    answeredBy,
  });

  const after = await listQuestions(db, project.tenant_id, project.id);
  const phaseQuestions = after.filter((candidate) => candidate.phase === phase);
  const prefillCascades: Array<{ questionId: string; newConfidence: number }> = [];
  for (const { key, source, prefill } of cascadesOf(question.key, value)) {
    const target = phaseQuestions.find((candidate) => candidate.key === key && !candidate.suppressed && candidate.answer === null);
    if (!target || JSON.stringify(target.prefill) === JSON.stringify(prefill)) continue;
    // Withdrawn only if this answer's earlier self raised it: a guess from elsewhere stays.
    if (prefill === null && target.prefill?.source !== source) continue;
    await setPrefill(db, project.tenant_id, target.id, prefill);
    target.prefill = prefill;
    prefillCascades.push({ questionId: target.id, newConfidence: prefill?.confidence ?? 0 });
  }

  const originPrefix = taskOriginPrefixOf[question.key];
  const tasksCreated = originPrefix ? await alignTasksWithAnswer(db, project, originPrefix, tasksFromAnswer(question.key, value, question.options), answeredBy) : [];

  const answers = answersByKey(after);
  const progress = phaseProgress(phaseQuestions);
  const ontologyUpdates = ontologyOf(question, value, confidence ?? 1);
  await updateProjectFlow(db, project.tenant_id, project.id, {
    progress: progressWith(project.progress, phase, progress.share),
    ...(phase === 'DISCOVERY' ? discoveryOutputOf(phaseQuestions) : {}),
    ...(question.key === 'features' && Array.isArray(value) ? { selected_features: value.map((key) => ({ key, name: question.options.find((option) => option.value === key)!.label })) } : {}),
  });
  const next = firstUnanswered(phaseQuestions);
  return {
    answerId,
    processed: true as const,
    effects: { ontologyUpdates, suggestions: suggestionsFor(question.key, answers), prefillCascades, tasksCreated },
    nextQuestion: next ? questionToOutput(next) : null,
  };
}

/**
 * The most important feature is one of those selected (once the selection is made), and a new
 * selection keeps the one already chosen: dropping it would leave that answer naming a feature the
 * project no longer selects. Choosing another one first lets the selection change.
 */
function requireFeatureAnswersAgree(key: string, value: AnswerValue, featureAnswers: AnswersByKey): void {
  const selected = featureAnswers.get('features')?.value;
  const chosen = featureAnswers.get('firstFeature')?.value;
  let refusal: string | undefined;
  if (key === 'firstFeature' && Array.isArray(selected) && !selected.includes(value as string)) refusal = `must be one of the selected features: ${selected.join(', ')}`;
  if (key === 'features' && typeof chosen === 'string' && Array.isArray(value) && !value.includes(chosen)) {
    refusal = `must include "${chosen}", the feature chosen as the most important (answer "firstFeature" with another of the features first)`;
  }
  if (refusal) throw invalid(`The answer to "${key}" ${refusal}`, { issues: [{ field: 'answer.value', issue: refusal }] });
}

/** The discovery answers by key with the ontology they give, and that ontology's coverage. */
function discoveryOutputOf(questions: readonly QuestionWithAnswer[]) {
  const answered = questions.filter((question) => question.answer !== null);
  const ontology = answered.flatMap((question) => ontologyOf(question, question.answer!.value, question.answer!.confidence ?? 1));
  return {
    discovery_output: { answers: Object.fromEntries(answered.map((question) => [question.key, question.answer!.value])), ontology },
    ontology_coverage: ontologyCoverage(ontology),
  };
}

/** When leaving a phase completes a timing the project shows, and entering one starts one. */
const completedTiming = { DISCOVERY: 'discovery_completed_at', FEATURE_SELECTION: 'feature_selection_completed_at' } as const;
const startedTiming = { FEATURE_SELECTION: 'feature_selection_started_at', PLAN_GENERATION: 'plan_generation_started_at' } as const;

/**
 * Moves the flow one phase forward when the current phase is ready (or an admin forces it): the
 * phase left counts as done, and the phase entered gets its questions (see enterPhase).
 */
export async function transitionFlow(db: Kysely<Database>, principal: Principal, input: TransitionInput) {
  const project = await requireProjectForCaller(db, principal, input.projectId, { lock: 'update' });
  const { mayForce } = await requireFlowMover(db, principal, project);
  if (input.force && !mayForce) throw forbidden("Forcing a transition is for the organization's admins and owners");
  requireActive(project);
  const from = currentFlowPhase(project);
  const next = phaseAfter(from);
  // SPECIFICATION, the last phase, has no next: never left.
  if (input.targetPhase !== next || from === 'SPECIFICATION') {
    throw new AppError('PHASE_INVALID', next ? `From ${from} the flow moves to ${next} only` : `${from} is the flow's last phase`, { currentPhase: from, allowedTargetPhase: next ?? null });
  }
  const earlier = await listQuestions(db, project.tenant_id, project.id);
  const ready = readinessOf(from, earlier.filter((question) => question.phase === from));
  if (!ready.isReady && !input.force) {
    throw new AppError('READINESS_FAILED', `Phase ${from} is not ready to move on (readiness ${ready.readinessScore}, threshold ${ready.threshold}, ${ready.blockers.length} blocker(s))`, {
      readinessScore: ready.readinessScore,
      threshold: ready.threshold,
      blockers: ready.blockers,
    });
  }
  const { questions, entryActions } = await enterPhase(db, project, next, earlier);
  const progress = progressWith(progressWith(project.progress, from, 1), next, phaseProgress(questions).share);
  const transitionedAt = await updateProjectFlow(db, project.tenant_id, project.id, {
    phase: next,
    progress,
    ...(from in completedTiming ? { completed: completedTiming[from as keyof typeof completedTiming] } : {}),
    ...(next in startedTiming ? { started: startedTiming[next as keyof typeof startedTiming] } : {}),
  });
  return { previousPhase: from, currentPhase: next, transitionedAt: transitionedAt.toISOString(), entryActions };
}
