import { router } from '../../trpc/init.ts';
import { authedProcedure } from '../../trpc/procedures.ts';
import { agentExecutionOutput, agentExecutionStarted, executionIdInput, generateSpecInput, memoryInput, memoryOutput, resumeInput } from './agents.schema.ts';
import { generateSpec, getExecution, listMemory, resumeExecution } from './agents.service.ts';

const tags = ['agents'];
const budgetExceeded = 'BUDGET_EXCEEDED: the budget cannot pay for the next call (its prompt and at least one token of answer)';
const notAMember = "FORBIDDEN: a customer, or a project with no organization; ORG_NOT_MEMBER: not a member of the project's organization";

/** Agents drafting a project's specification under a budget (seed §4.5, DESIGN §7). */
export const agentsRouter = router({
  generateSpec: authedProcedure
    .meta({
      successStatus: 202,
      openapi: {
        method: 'POST',
        path: '/agents/generate-spec',
        tags,
        summary: "Have agents draft the project's specification from its flow's answers (queued; GET statusUrl for progress and the result)",
        errorResponses: { 402: budgetExceeded, 403: notAMember, 404: 'NOT_FOUND: no such project', 409: 'CONFLICT: the flow has not started' },
      },
    })
    .input(generateSpecInput)
    .output(agentExecutionStarted)
    .mutation(({ ctx, input }) => generateSpec(ctx.db, ctx.principal, ctx.config.ai, input)),

  executionStatus: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/agents/execution/{executionId}/status',
        tags,
        summary: 'An agent execution: progress, spending, every call made, and its result or its error with a checkpoint',
        errorResponses: { 404: 'NOT_FOUND: no such execution' },
      },
    })
    .input(executionIdInput)
    .output(agentExecutionOutput)
    .query(({ ctx, input }) => getExecution(ctx.db, ctx.principal, input.executionId)),

  resume: authedProcedure
    .meta({
      successStatus: 202,
      openapi: {
        method: 'POST',
        path: '/agents/execution/{executionId}/resume',
        tags,
        summary: 'Continue a failed execution from its checkpoint, with a new budget if given; the steps done are not made again',
        errorResponses: { 402: "BUDGET_EXCEEDED: the budget is not above what the execution already spent", 403: notAMember, 404: 'NOT_FOUND: no such execution', 409: 'CONFLICT: not failed, or not its latest checkpoint' },
      },
    })
    .input(resumeInput)
    .output(agentExecutionStarted)
    .mutation(({ ctx, input }) => resumeExecution(ctx.db, ctx.principal, ctx.config.ai, input)),

  memory: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/agents/memory', tags, summary: "Agents' sessions (one per execution and agent) in the projects the caller sees, with totals" } })
    .input(memoryInput)
    .output(memoryOutput)
    .query(({ ctx, input }) => listMemory(ctx.db, ctx.principal, input)),
});
