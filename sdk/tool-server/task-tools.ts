import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { SpecwrightClient } from '../client.ts';
import { projectId, reads, type Calling } from './tool-shapes.ts';

/**
 * A project's tasks as tools: list them, list the caller's own, and answer one with one of its
 * actions. Creating tasks is left to the API: an assistant answers the work asked of it.
 */
export function registerTaskTools(server: McpServer, client: SpecwrightClient, calling: Calling): void {
  server.registerTool(
    'list_tasks',
    {
      title: "List a project's tasks",
      description: "The project's tasks, oldest first: type, status (blocked until its dependencies complete), assignee, and the actions that answer it (each with its id and config).",
      inputSchema: z.strictObject({
        projectId,
        status: z.enum(['pending', 'in_progress', 'completed', 'cancelled', 'blocked']).optional(),
        assigneeType: z.enum(['user', 'agent']).optional(),
        limit: z.number().int().min(1).max(200).optional().describe('At most this many (default 50, at most 200)'),
        offset: z.number().int().min(0).optional().describe('Skip this many (default 0)'),
      }),
      annotations: reads,
    },
    (input, request) => calling(request, (call) => client.tasks.list.query(input, call)),
  );

  server.registerTool(
    'my_tasks',
    { title: 'My tasks', description: 'The tasks assigned to the caller across the projects they see, with counts by status.', inputSchema: z.strictObject({}), annotations: reads },
    (_input, request) => calling(request, (call) => client.tasks.mine.query({}, call)),
  );

  server.registerTool(
    'submit_task_action',
    {
      title: 'Answer a task',
      description:
        'Submits one of a task\'s actions, which completes the task: FORM_SUBMIT takes {field: value} for its config.fields; SINGLE_SELECT {value} of its config.options; APPROVE_REJECT {decision: "approve"|"reject", comment}. ' +
        'Give an idempotencyKey to make a retry safe: the same key and data, from the same caller, answer the first response again.',
      inputSchema: z.strictObject({
        taskId: z.string().describe('A task id (list_tasks)'),
        actionId: z.string().describe("One of the task's action ids: a1, a2, …"),
        data: z.unknown().describe('What the action takes (see the description)'),
        idempotencyKey: z.string().optional(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (input, request) => calling(request, (call) => client.tasks.submitAction.mutate(input, call)),
  );
}
