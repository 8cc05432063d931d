import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { SpecwrightClient } from '../client.ts';
import { projectId, reads, type Calling } from './tool-shapes.ts';

/**
 * A project's specification as tools: compile what its flow says, then read the result (entities,
 * endpoints, requirements, …) to build from. The compile is queued; get_specification answers
 * `compiling` until the worker is done.
 */
export function registerSpecificationTools(server: McpServer, client: SpecwrightClient, calling: Calling): void {
  server.registerTool(
    'compile_specification',
    {
      title: "Compile a project's specification",
      description:
        "Compiles the project's specification from its flow's answers as they are now, and answers its specId; poll get_specification until its status is completed or failed. " +
        'Each compile is a new version. At most 5 compiles a minute.',
      inputSchema: z.strictObject({
        projectId,
        includeTestPlan: z.boolean().optional().describe('Add test cases, one per requirement'),
        includeTaskGraph: z.boolean().optional().describe('Add tasks with their dependencies'),
        includeRunbook: z.boolean().optional().describe('Add the release steps'),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ projectId: project, ...options }, request) => calling(request, (call) => client.specification.compile.mutate({ projectId: project, options }, call)),
  );

  server.registerTool(
    'get_specification',
    {
      title: 'Read a specification',
      description: 'A compiled specification: its status, the spec (overview, entities with fields, endpoints, workflows, requirements, test cases, architecture, design system) and its validation (errors and warnings).',
      inputSchema: z.strictObject({ specId: z.string().describe('The specId compile_specification answered') }),
      annotations: reads,
    },
    (input, request) => calling(request, (call) => client.specification.get.query(input, call)),
  );
}
