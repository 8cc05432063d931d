import type { Kysely } from 'kysely';
import { databaseNow } from '../../db/database-clock.ts';
import type { Database, FlowAnswerRow, FlowQuestionRow, ProjectRow } from '../../db/database.ts';
import type { AnswerValue, Prefill } from './flow-catalogue.ts';
import type { FlowPhase } from './flow-phases.ts';

/** A question of a project with what the flow's rules read of its answer, if it has one. */
export type QuestionWithAnswer = FlowQuestionRow & { answer: Pick<FlowAnswerRow, 'id' | 'value' | 'confidence'> | null };

export type NewQuestion = Omit<FlowQuestionRow, 'id' | 'tenant_id' | 'project_id' | 'created_at'>;

export async function insertQuestions(db: Kysely<Database>, tenantId: string, projectId: string, questions: NewQuestion[]): Promise<void> {
  if (questions.length === 0) return;
  await db
    .insertInto('flow_questions')
    .values(
      questions.map((question) => ({
        ...question,
        tenant_id: tenantId,
        project_id: projectId,
        variants: JSON.stringify(question.variants),
        options: JSON.stringify(question.options),
        bounds: question.bounds === null ? null : JSON.stringify(question.bounds),
        prefill: question.prefill === null ? null : JSON.stringify(question.prefill),
      })),
    )
    .execute();
}

/** A question of the project with the whole of its answer (who gave it, when, its notes). */
export type QuestionWithFullAnswer = FlowQuestionRow & {
  answer: Pick<FlowAnswerRow, 'id' | 'value' | 'selected_variant' | 'confidence' | 'notes' | 'answered_by' | 'created_at' | 'updated_at'> | null;
};

/**
 * Every question the flow put on the project (of one phase, if named), with its answer, in the
 * order they are asked: one read, from which a request derives whatever it needs of them.
 */
export async function listQuestions(db: Kysely<Database>, tenantId: string, projectId: string, phase?: FlowPhase): Promise<QuestionWithFullAnswer[]> {
  let query = db
    .selectFrom('flow_questions as q')
    .leftJoin('flow_answers as a', 'a.question_id', 'q.id')
    .selectAll('q')
    .select([
      'a.id as answer_id',
      'a.value as answer_value',
      'a.selected_variant as answer_selected_variant',
      'a.confidence as answer_confidence',
      'a.notes as answer_notes',
      'a.answered_by as answer_answered_by',
      'a.created_at as answer_created_at',
      'a.updated_at as answer_updated_at',
    ])
    .where('q.tenant_id', '=', tenantId)
    .where('q.project_id', '=', projectId);
  if (phase) query = query.where('q.phase', '=', phase);
  const rows = await query.orderBy('q.position').execute();
  return rows.map(({ answer_id, answer_value, answer_selected_variant, answer_confidence, answer_notes, answer_answered_by, answer_created_at, answer_updated_at, ...question }) => ({
    ...question,
    answer:
      answer_id === null
        ? null
        : {
            id: answer_id,
            value: answer_value!,
            selected_variant: answer_selected_variant,
            confidence: answer_confidence,
            notes: answer_notes,
            answered_by: answer_answered_by,
            created_at: answer_created_at!,
            updated_at: answer_updated_at!,
          },
  }));
}

/** Stores the question's answer, replacing the one it had; returns the answer's id (kept across replacements). */
export async function saveAnswer(
  db: Kysely<Database>,
  values: { tenantId: string; projectId: string; questionId: string; value: AnswerValue; selectedVariant: 'original' | 'simplified' | null; confidence: number | null; notes: string | null; answeredBy: string | null },
): Promise<string> {
  const row = {
    value: JSON.stringify(values.value),
    selected_variant: values.selectedVariant,
    confidence: values.confidence,
    notes: values.notes,
    answered_by: values.answeredBy,
  };
  const { id } = await db
    .insertInto('flow_answers')
    .values({ ...row, tenant_id: values.tenantId, project_id: values.projectId, question_id: values.questionId })
    .onConflict((conflict) => conflict.columns(['question_id', 'tenant_id']).doUpdateSet({ ...row, updated_at: databaseNow }))
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

export async function setPrefill(db: Kysely<Database>, tenantId: string, questionId: string, prefill: Prefill | null): Promise<void> {
  await db.updateTable('flow_questions').set({ prefill: prefill === null ? null : JSON.stringify(prefill) }).where('tenant_id', '=', tenantId).where('id', '=', questionId).execute();
}

/** What the flow writes on the project itself. */
export type ProjectFlowChanges = Partial<
  Pick<ProjectRow, 'phase' | 'progress' | 'discovery_output' | 'selected_features' | 'ontology_coverage'> & {
    started: 'discovery_started_at' | 'feature_selection_started_at' | 'plan_generation_started_at';
    completed: 'discovery_completed_at' | 'feature_selection_completed_at';
  }
>;

/** Writes the flow's changes on the project and answers when they were made (the database's clock). */
export async function updateProjectFlow(db: Kysely<Database>, tenantId: string, projectId: string, changes: ProjectFlowChanges): Promise<Date> {
  const { started, completed, progress, discovery_output, selected_features, ...rest } = changes;
  const { updated_at } = await db
    .updateTable('projects')
    .set({
      ...rest,
      ...(progress !== undefined ? { progress: JSON.stringify(progress) } : {}),
      ...(discovery_output !== undefined ? { discovery_output: JSON.stringify(discovery_output) } : {}),
      ...(selected_features !== undefined ? { selected_features: JSON.stringify(selected_features) } : {}),
      ...(started ? { [started]: databaseNow } : {}),
      ...(completed ? { [completed]: databaseNow } : {}),
      updated_at: databaseNow,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', projectId)
    .returning('updated_at')
    .executeTakeFirstOrThrow();
  return updated_at;
}

/** Deletes the project's answers, then its questions; returns how many of each went. */
export async function deleteFlowOfProject(db: Kysely<Database>, tenantId: string, projectId: string): Promise<{ answers: number; questions: number }> {
  const answers = await db.deleteFrom('flow_answers').where('tenant_id', '=', tenantId).where('project_id', '=', projectId).executeTakeFirst();
  const questions = await db.deleteFrom('flow_questions').where('tenant_id', '=', tenantId).where('project_id', '=', projectId).executeTakeFirst();
  return { answers: Number(answers.numDeletedRows), questions: Number(questions.numDeletedRows) };
}
