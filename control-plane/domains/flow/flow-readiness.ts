import type { ProjectPhase } from '../../db/database.ts';
import type { QuestionWithAnswer } from './flow.repository.ts';
import type { ReadinessOutput } from './flow.schema.ts';

/** The readiness score a phase needs before the flow moves on (unless an admin forces it). */
export const READINESS_THRESHOLD = 0.8;
/** A prefill the service is less sure of than this, not yet confirmed by an answer, is warned about. */
export const LOW_PREFILL_CONFIDENCE = 0.7;
/** An answer given with less confidence than this is warned about. */
export const LOW_ANSWER_CONFIDENCE = 0.5;

/** The questions a phase asks: those earlier answers did not make moot. */
export const askedQuestions = (questions: readonly QuestionWithAnswer[]) => questions.filter((question) => !question.suppressed);

/** Answered and total of a phase's asked questions, and the share answered (1 when it asks none). */
export function phaseProgress(questions: readonly QuestionWithAnswer[]) {
  const asked = askedQuestions(questions);
  const answered = asked.filter((question) => question.answer !== null).length;
  return { answered, total: asked.length, share: asked.length === 0 ? 1 : answered / asked.length };
}

/** To three decimals, rounded down: a score shown as reaching the threshold does reach it. */
const roundDown = (value: number) => Math.floor(value * 1000 + 1e-9) / 1000;

/**
 * Whether the current phase's questions are answered well enough to move on: the weighted share
 * of its asked questions answered must reach the threshold, and every required one must be
 * answered (each unanswered one is a blocker). Low-confidence prefills and answers only warn.
 */
export function readinessOf(phase: ProjectPhase, questions: readonly QuestionWithAnswer[]): ReadinessOutput {
  if (phase === 'CREATED') {
    return {
      currentPhase: phase,
      readinessScore: 0,
      threshold: READINESS_THRESHOLD,
      isReady: false,
      blockers: [{ type: 'flow_not_started', questionId: null, message: 'The flow has not started: POST /flow/start begins discovery' }],
      warnings: [],
    };
  }
  const asked = askedQuestions(questions);
  const totalWeight = asked.reduce((sum, question) => sum + question.weight, 0);
  const answeredWeight = asked.reduce((sum, question) => sum + (question.answer ? question.weight : 0), 0);
  const readinessScore = totalWeight === 0 ? 1 : roundDown(answeredWeight / totalWeight);
  const blockers: ReadinessOutput['blockers'] = asked
    .filter((question) => question.required && question.answer === null)
    .map((question) => ({ type: 'unanswered_question' as const, questionId: question.id, message: `Required question "${question.key}" is not answered` }));
  if (blockers.length === 0 && readinessScore < READINESS_THRESHOLD) {
    // Every required question is answered, yet the optional ones left out weigh too much: say which
    // ones would lift the score, rather than refuse with no blocker to act on.
    const optional = asked.filter((question) => question.answer === null).map((question) => `"${question.key}"`);
    blockers.push({
      type: 'below_threshold',
      questionId: null,
      message: `The readiness score ${readinessScore} is below the threshold ${READINESS_THRESHOLD}: answer more of the optional questions (${optional.join(', ')})`,
    });
  }
  const lowPrefills = asked.filter((question) => question.answer === null && question.prefill !== null && question.prefill.confidence < LOW_PREFILL_CONFIDENCE).length;
  const lowAnswers = asked.filter((question) => question.answer?.confidence != null && question.answer.confidence < LOW_ANSWER_CONFIDENCE).length;
  const warnings: ReadinessOutput['warnings'] = [];
  if (lowPrefills > 0) {
    warnings.push({ type: 'low_confidence_prefill', count: lowPrefills, message: `${lowPrefills} unanswered question(s) carry a guess with confidence below ${LOW_PREFILL_CONFIDENCE}: confirm or correct them` });
  }
  if (lowAnswers > 0) {
    warnings.push({ type: 'low_confidence_answer', count: lowAnswers, message: `${lowAnswers} answer(s) were given with confidence below ${LOW_ANSWER_CONFIDENCE}` });
  }
  return {
    currentPhase: phase,
    readinessScore,
    threshold: READINESS_THRESHOLD,
    isReady: blockers.length === 0 && readinessScore >= READINESS_THRESHOLD,
    blockers,
    warnings,
  };
}
