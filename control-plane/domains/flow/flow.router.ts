import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import {
  answerQuestionInput,
  answerQuestionOutput,
  nextQuestionInput,
  nextQuestionOutput,
  projectQuestionsInput,
  projectQuestionsOutput,
  readinessInput,
  readinessOutput,
  startFlowInput,
  startFlowOutput,
  transitionInput,
  transitionOutput,
} from './flow.schema.ts';
import { answerQuestion, nextQuestion, projectQuestions, readiness, startFlow, transitionFlow } from './flow.service.ts';

const tags = ['flow'];

/** A project's guided flow (seed §4.4): discovery questions, readiness, and moving phase by phase. */
export const flowRouter = router({
  start: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/flow/start',
        tags,
        summary: "Start a project's flow: CREATED → DISCOVERY, with the first question (members, admins and owners)",
        errorResponses: {
          403: "FORBIDDEN: a customer (or anyone below member) does not start a flow; ORG_NOT_MEMBER: the caller is no member of the project's organization",
          404: 'NOT_FOUND: no such project',
          409: 'CONFLICT: the flow has started already, or the project is not active',
        },
      },
    })
    .input(startFlowInput)
    .output(startFlowOutput)
    .mutation(({ ctx, input }) => startFlow(ctx.db, ctx.principal, input.projectId)),

  nextQuestion: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/flow/get-next-question',
        tags,
        summary: "The current phase's next unanswered question, with the phase's progress",
        errorResponses: { 404: 'NOT_FOUND: no such project', 409: 'CONFLICT: the flow has not started' },
      },
    })
    .input(nextQuestionInput)
    .output(nextQuestionOutput)
    .mutation(({ ctx, input }) => nextQuestion(ctx.db, ctx.principal, input.projectId)),

  answerQuestion: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/flow/answer-question',
        tags,
        summary: 'Answer a question of the current phase (again to replace the answer); answers with its effects and the next question',
        errorResponses: {
          404: 'NOT_FOUND: no such project, or no such question on it',
          409: 'CONFLICT: the question is not of the current phase or is not asked, the flow has not started, or the project is not active',
        },
      },
    })
    .input(answerQuestionInput)
    .output(answerQuestionOutput)
    .mutation(({ ctx, input }) => answerQuestion(ctx.db, ctx.principal, input)),

  questions: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/flow/questions/{projectId}',
        tags,
        summary: "Every question the flow has put on the project (or one phase's), suppressed ones included, in order, each with its answer",
        errorResponses: { 404: 'NOT_FOUND: no such project' },
      },
    })
    .input(projectQuestionsInput)
    .output(projectQuestionsOutput)
    .query(({ ctx, input }) => projectQuestions(ctx.db, ctx.principal, input.projectId, input.phase)),

  readiness: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/flow/readiness/{projectId}', tags, summary: 'Whether the current phase is ready to move on, with what blocks it', errorResponses: { 404: 'NOT_FOUND: no such project' } } })
    .input(readinessInput)
    .output(readinessOutput)
    .query(({ ctx, input }) => readiness(ctx.db, ctx.principal, input.projectId)),

  transition: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/flow/transition',
        tags,
        summary: 'Move the flow to the next phase when the current one is ready; force (admins and owners) moves it anyway',
        errorResponses: {
          400: 'VALIDATION_ERROR: the body is not a transition (details.issues); READINESS_FAILED: the phase is not ready (details: readinessScore, threshold, blockers); PHASE_INVALID: targetPhase is not the next phase (details: currentPhase, allowedTargetPhase)',
          403: "FORBIDDEN: a customer (or anyone below member) does not move a flow, and force is for the organization's admins and owners; ORG_NOT_MEMBER: the caller is no member of the project's organization",
          404: 'NOT_FOUND: no such project',
          409: 'CONFLICT: the flow has not started, or the project is not active',
        },
      },
    })
    .input(transitionInput)
    .output(transitionOutput)
    .mutation(({ ctx, input }) => transitionFlow(ctx.db, ctx.principal, input)),
});
