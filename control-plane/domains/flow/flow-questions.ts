import type { Kysely } from 'kysely';
import type { Database, ProjectRow } from '../../db/database.ts';
import { questionCatalogue, questionsOfPhase } from './flow-catalogue.ts';
import { featureCandidates, matchedPatterns, prefillOnEntry, suppressedOnEntry, type AnswersByKey } from './flow-derivations.ts';
import type { FlowPhase } from './flow-phases.ts';
import { insertQuestions, listQuestions, type QuestionWithAnswer, type QuestionWithFullAnswer } from './flow.repository.ts';
import type { QuestionOutput } from './flow.schema.ts';

/** The answers of these questions, by question key. */
export function answersByKey(questions: readonly QuestionWithAnswer[]): AnswersByKey {
  return new Map(questions.flatMap((question) => (question.answer ? [[question.key, { value: question.answer.value, confidence: question.answer.confidence }] as const] : [])));
}

/** What entering a phase did, as `POST /flow/transition` reports it. */
export interface EntryActions {
  featureCandidatesGenerated: number;
  patternsMatched: number;
  questionsSupressed: number;
}

/**
 * Puts a phase's questions on the project: each with the service's guess from the project and the
 * answers of the `earlier` questions (those the project already has), a feature question with the project's feature candidates as its options, and a
 * question the answers make moot marked suppressed (kept, so readiness can say it was not asked).
 */
export async function enterPhase(
  db: Kysely<Database>,
  project: ProjectRow,
  phase: FlowPhase,
  earlier: readonly QuestionWithAnswer[],
): Promise<{ questions: QuestionWithFullAnswer[]; entryActions: EntryActions }> {
  const answers = answersByKey(earlier);
  const candidates = phase === 'FEATURE_SELECTION' ? featureCandidates(answers) : [];
  const rows = questionsOfPhase(phase).map((definition) => {
    const options = definition.key === 'features' || definition.key === 'firstFeature' ? candidates : (definition.options ?? []);
    return {
      phase,
      key: definition.key,
      position: questionCatalogue.indexOf(definition),
      text: definition.text,
      description: definition.description,
      variants: [
        { type: 'original' as const, text: definition.text },
        { type: 'simplified' as const, text: definition.simplified },
      ],
      answer_type: definition.answerType,
      options,
      bounds: definition.bounds ?? null,
      required: definition.required,
      weight: definition.weight,
      prefill: prefillOnEntry(definition, project, answers, candidates),
      suppressed: suppressedOnEntry(definition, answers, candidates),
    };
  });
  await insertQuestions(db, project.tenant_id, project.id, rows);
  return {
    questions: await listQuestions(db, project.tenant_id, project.id, phase),
    entryActions: {
      featureCandidatesGenerated: candidates.length,
      patternsMatched: phase === 'PLAN_GENERATION' ? matchedPatterns(answers).length : 0,
      questionsSupressed: rows.filter((row) => row.suppressed).length,
    },
  };
}

/** The phase's first asked question without an answer, if any. */
export function firstUnanswered(questions: readonly QuestionWithAnswer[]): QuestionWithAnswer | undefined {
  return questions.find((question) => !question.suppressed && question.answer === null);
}

export function questionToOutput(question: QuestionWithAnswer): QuestionOutput {
  return {
    id: question.id,
    key: question.key,
    phase: question.phase,
    text: question.text,
    description: question.description,
    variants: question.variants,
    answerType: question.answer_type,
    options: question.options,
    bounds: question.bounds,
    required: question.required,
    prefill: question.prefill,
  };
}
