import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { SpecwrightClient } from '../client.ts';
import { projectId, reads, type Calling } from './tool-shapes.ts';

const writes = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

/**
 * The guided flow as tools: an assistant starts a project's discovery, asks the next question,
 * answers it (from what its user told it), checks readiness and moves the project on. The service
 * checks each answer against its question; the tools describe the shapes and pass them through.
 */
export function registerFlowTools(server: McpServer, client: SpecwrightClient, calling: Calling): void {
  server.registerTool(
    'start_flow',
    {
      title: "Start a project's discovery",
      description: 'Moves a project from CREATED to DISCOVERY and answers its first question and how many the phase asks.',
      inputSchema: z.strictObject({ projectId }),
      annotations: writes,
    },
    (input, request) => calling(request, (options) => client.flow.start.mutate(input, options)),
  );

  server.registerTool(
    'next_question',
    {
      title: 'The next question',
      description:
        "The current phase's first unanswered question — its text, answerType, options (for select and multiselect) and the service's prefill guess — " +
        'with the phase progress; null when every question of the phase is answered (then check_readiness and move_flow).',
      inputSchema: z.strictObject({ projectId }),
      annotations: reads,
    },
    (input, request) => calling(request, (options) => client.flow.nextQuestion.mutate(input, options)),
  );

  server.registerTool(
    'answer_question',
    {
      title: 'Answer a question',
      description:
        'Answers a question of the current phase (answering again replaces the answer). value: a string for text and select (an option value), ' +
        'an array of option values for multiselect, true or false for boolean, a number for number. Answers the effects and the next question. ' +
        'An integrations answer makes a CONNECT task per outside system it names, a compliance answer a REVIEW task per regulation it picks (effects.tasksCreated, then list_tasks); ' +
        'answering either again cancels the tasks it no longer asks for (unless completed or waited for) and reopens cancelled ones it asks for again.',
      inputSchema: z.strictObject({
        projectId,
        questionId: z.string().describe('The id of the question (next_question)'),
        value: z.union([z.string(), z.array(z.string()), z.boolean(), z.number()]).describe("The answer, as the question's answerType says"),
        confidence: z.number().min(0).max(1).optional().describe('How sure the answer is, from 0 to 1 (below 0.5 readiness warns)'),
        notes: z.string().optional().describe('Why, or what the user said'),
      }),
      annotations: writes,
    },
    ({ projectId: project, questionId, ...answer }, request) => calling(request, (options) => client.flow.answerQuestion.mutate({ projectId: project, questionId, answer }, options)),
  );

  server.registerTool(
    'list_flow_questions',
    {
      title: 'What the project was asked',
      description: "Every question the project's flow has asked so far (or one phase's), in order, each with its answer (value, confidence, notes, who answered and when) or null.",
      inputSchema: z.strictObject({
        projectId,
        phase: z.enum(['DISCOVERY', 'FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY', 'SPECIFICATION']).optional().describe("Only this phase's questions"),
      }),
      annotations: reads,
    },
    (input, request) => calling(request, (options) => client.flow.questions.query(input, options)),
  );

  server.registerTool(
    'check_readiness',
    {
      title: 'Is the phase ready?',
      description: 'Whether the current phase may move on: its readiness score against the threshold, what blocks it (required questions still unanswered, or a score below the threshold) and warnings.',
      inputSchema: z.strictObject({ projectId }),
      annotations: reads,
    },
    (input, request) => calling(request, (options) => client.flow.readiness.query(input, options)),
  );

  server.registerTool(
    'move_flow',
    {
      title: 'Move to the next phase',
      description:
        'Moves the project to targetPhase, which must be the phase after the current one (DISCOVERY → FEATURE_SELECTION → PLAN_GENERATION → PLANNING → VISUAL_DISCOVERY → SPECIFICATION), ' +
        "when the current phase is ready (check_readiness). Answers what entering the phase did; the new phase's questions come from next_question.",
      inputSchema: z.strictObject({
        projectId,
        targetPhase: z.enum(['FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY', 'SPECIFICATION']).describe('The phase after the current one'),
      }),
      annotations: writes,
    },
    (input, request) => calling(request, (options) => client.flow.transition.mutate(input, options)),
  );
}
