import { z } from 'zod';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { uuidInput } from '../../http/uuid-input.ts';
import { projectPhases } from '../projects/projects.schema.ts';
import { taskTypes } from '../tasks/tasks.schema.ts';
import { flowPhases, transitionTargets } from './flow-phases.ts';

export const answerTypes = ['text', 'select', 'multiselect', 'boolean', 'number'] as const;

/** The longest text answer, and the most values a multiple choice takes. */
export const TEXT_ANSWER_MAX = 10_000;
const CHOICES_MAX = 100;

const answerValue = z.union([z.string().max(TEXT_ANSWER_MAX), z.array(z.string().max(200)).max(CHOICES_MAX), z.boolean(), z.number()], {
  error: (issue) => (issue.input === undefined ? 'is required' : `must be a string (at most ${TEXT_ANSWER_MAX} characters), an array of at most ${CHOICES_MAX} option values, a boolean or a number`),
});
const fraction = z.number().min(0).max(1);

const prefillOutput = z.object({ value: answerValue, confidence: fraction, source: z.string(), explanation: z.string() });

export const questionOutput = z.object({
  id: z.uuid(),
  key: z.string().describe('Names the question within its project'),
  phase: z.enum(flowPhases),
  text: z.string(),
  description: z.string(),
  variants: z.array(z.object({ type: z.enum(['original', 'simplified']), text: z.string() })),
  answerType: z.enum(answerTypes),
  options: z
    .array(z.object({ value: z.string(), label: z.string(), exclusive: z.literal(true).optional().describe('A multiselect answer naming it names no other option') }))
    .describe('The values a select or multiselect answer may take'),
  bounds: z.object({ min: z.number(), max: z.number(), integer: z.boolean() }).nullable().describe('The range of a number answer'),
  required: z.boolean(),
  prefill: prefillOutput.nullable().describe("The service's guess, how sure it is and why; null when it has none"),
});

const projectIdField = uuidInput();

export const startFlowInput = z.strictObject({ projectId: projectIdField });
export const startFlowOutput = z.object({
  projectId: z.uuid(),
  phase: z.literal('DISCOVERY'),
  firstQuestion: questionOutput.nullable(),
  totalQuestions: z.number().int(),
});

export const nextQuestionInput = z.strictObject({
  projectId: projectIdField,
  sessionId: z.string().max(200).superRefine(refuseUnstorableText).optional().describe('Accepted and not used: questions belong to the project, whoever asks and from whichever session'),
});
const questionProgress = z.object({ answered: z.number().int(), total: z.number().int(), percent: z.number().int() });
export const nextQuestionOutput = z.object({
  question: questionOutput.nullable().describe("The current phase's first unanswered question; null when every one is answered"),
  progress: questionProgress,
  isLastQuestion: z.boolean().describe('Whether this is the only question of the phase left unanswered'),
});

export const answerQuestionInput = z
  .strictObject({
    projectId: projectIdField,
    questionId: uuidInput(),
    answer: z.strictObject({
      // Refused text is named field by field, each whatever its siblings: a missing value must not hide bad notes.
      value: answerValue.superRefine(refuseUnstorableText).describe("A string (text, select), an array of option values (multiselect), a boolean or a number, as the question's answerType says"),
      selectedVariant: z.enum(['original', 'simplified']).optional().describe('Which wording of the question was answered'),
      confidence: fraction.optional().describe('How sure the answer is, from 0 to 1; below 0.5 readiness warns about it'),
      notes: z.string().max(2000).superRefine(refuseUnstorableText).optional(),
    }),
  });

const ontologyUpdate = z.object({ type: z.string(), name: z.string(), confidence: fraction });
export const answerQuestionOutput = z.object({
  answerId: z.uuid(),
  processed: z.literal(true),
  effects: z.object({
    ontologyUpdates: z.array(ontologyUpdate),
    suggestions: z.array(z.string()),
    prefillCascades: z.array(z.object({ questionId: z.uuid(), newConfidence: fraction })),
    tasksCreated: z
      .array(z.object({ taskId: z.uuid(), type: z.enum(taskTypes), title: z.string() }))
      .describe('Tasks this answer made: a CONNECT task for each outside system the integrations answer names, a REVIEW task for each regulation the compliance answer picks (see GET /tasks)'),
  }),
  nextQuestion: questionOutput.nullable(),
});

export const readinessInput = z.object({ projectId: projectIdField });
export const readinessOutput = z.object({
  currentPhase: z.enum(projectPhases),
  readinessScore: fraction,
  threshold: fraction,
  isReady: z.boolean(),
  blockers: z
    .array(z.object({ type: z.enum(['unanswered_question', 'below_threshold', 'flow_not_started']), questionId: z.uuid().nullable(), message: z.string() }))
    .describe('Each reason the phase is not ready: a required question unanswered, or (every required one answered) a score below the threshold; empty when ready'),
  warnings: z.array(z.object({ type: z.enum(['low_confidence_prefill', 'low_confidence_answer']), count: z.number().int(), message: z.string() })),
});

export const transitionInput = z.strictObject({
  projectId: projectIdField,
  targetPhase: z.enum(transitionTargets).describe('The phase after the current one'),
  force: z.boolean().optional().describe("Move even though readiness fails (the organization's admins and owners only)"),
});
export const transitionOutput = z.object({
  // A transition leaves a phase of the flow: CREATED is left by POST /flow/start, and SPECIFICATION is the last.
  previousPhase: z.enum(flowPhases.slice(0, -1) as ['DISCOVERY', 'FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY']),
  currentPhase: z.enum(flowPhases),
  transitionedAt: z.iso.datetime(),
  entryActions: z.object({
    featureCandidatesGenerated: z.number().int(),
    patternsMatched: z.number().int(),
    questionsSupressed: z.number().int().describe("Questions of the new phase that earlier answers made moot (the seed's spelling)"),
  }),
});

export const projectQuestionsInput = z.object({
  projectId: projectIdField,
  phase: z.enum(flowPhases).describe("Only this phase's questions; every phase entered so far when absent").optional(),
});
export const projectQuestionsOutput = z.object({
  projectId: z.uuid(),
  currentPhase: z.enum(projectPhases),
  questions: z.array(
    questionOutput.extend({
      suppressed: z.boolean().describe('Not asked: earlier answers made it moot'),
      answer: z
        .object({
          id: z.uuid(),
          value: answerValue,
          selectedVariant: z.enum(['original', 'simplified']).nullable(),
          confidence: fraction.nullable(),
          notes: z.string().nullable(),
          answeredBy: z.uuid().nullable().describe('The user who gave the answer; null for a platform admin acting in the tenant, or a user since deleted'),
          answeredAt: z.iso.datetime(),
          updatedAt: z.iso.datetime().describe('When it was last replaced (answeredAt if never)'),
        })
        .nullable(),
    }),
  ),
});

export type QuestionOutput = z.infer<typeof questionOutput>;
export type AnswerQuestionInput = z.infer<typeof answerQuestionInput>;
export type TransitionInput = z.infer<typeof transitionInput>;
export type ReadinessOutput = z.infer<typeof readinessOutput>;
