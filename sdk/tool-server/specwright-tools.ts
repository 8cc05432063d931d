import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { SpecwrightClient } from '../client.ts';
import { answered, failed } from './tool-results.ts';

/**
 * The tools a coding assistant gets: find the caller's organizations and projects, start a project,
 * run a kit on it, and read what the kit generated. Inputs are described here for the assistant and
 * checked by the service (its VALIDATION_ERROR comes back naming the field), so the two never
 * disagree about what is allowed.
 */
const orgId = z.string().describe('An organization id (list_organizations)');
const projectId = z.string().describe('A project id (list_projects)');
const executionId = z.string().describe('An execution id (execute_kit answers it)');
const paging = {
  limit: z.number().int().optional().describe('At most this many (default 50, at most 200)'),
  offset: z.number().int().optional().describe('Skip this many (default 0)'),
};

const reads = { readOnlyHint: true, openWorldHint: false } as const;

/** Runs one call of the client and answers its data, or why it failed. */
async function calling(call: () => Promise<object>): Promise<CallToolResult> {
  try {
    return answered(await call());
  } catch (error) {
    return failed(error);
  }
}

export function registerSpecwrightTools(server: McpServer, client: SpecwrightClient): void {
  server.registerTool(
    'whoami',
    { title: 'Who am I', description: 'The user the API key belongs to, and the tenant its calls act in.', annotations: reads },
    () => calling(() => client.me.get.query()),
  );

  server.registerTool(
    'list_organizations',
    { title: 'List organizations', description: 'The organizations the caller is a member of, oldest first. Kits run within an organization.', inputSchema: paging, annotations: reads },
    (input) => calling(() => client.organizations.list.query(input)),
  );

  server.registerTool(
    'list_projects',
    {
      title: 'List projects',
      description: 'The projects the caller can see, oldest first, with their phase and progress.',
      inputSchema: { status: z.enum(['active', 'completed', 'archived']).optional().describe('Only projects of this status'), ...paging },
      annotations: reads,
    },
    (input) => calling(() => client.projects.list.query(input)),
  );

  server.registerTool(
    'get_project',
    { title: 'Get a project', description: 'One project in detail: phase, timings, discovery output, selected features and progress.', inputSchema: { projectId }, annotations: reads },
    (input) => calling(() => client.projects.get.query(input)),
  );

  server.registerTool(
    'create_project',
    {
      title: 'Create a project',
      description: "Starts a project (status active, phase CREATED) in the caller's first organization.",
      inputSchema: {
        name: z.string().describe('The project name'),
        description: z.string().optional().describe('What the product is'),
        metadata: z.record(z.string(), z.unknown()).optional().describe('Free-form JSON kept with the project'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (input) => calling(() => client.projects.create.mutate(input)),
  );

  server.registerTool(
    'list_kits',
    {
      title: 'List kits',
      description: 'The kits an organization can run (its own and the built-in ones: OpenAPI documents, database schemas, docs, …), with their latest version.',
      inputSchema: { orgId, ...paging },
      annotations: reads,
    },
    (input) => calling(() => client.kits.list.query(input)),
  );

  server.registerTool(
    'execute_kit',
    {
      title: 'Run a kit on a project',
      description:
        'Starts a run of a kit on a project and answers its execution id; poll get_execution until its status is completed, partial or failed. ' +
        "Unless dryRun is true, the kit's APPLY step runs too (it may push or deploy, as the kit does, with the organization's stored credentials).",
      inputSchema: {
        orgId,
        kitId: z.string().describe('The kit id (list_kits), e.g. openapi-api'),
        projectId,
        businessProfile: z
          .looseObject({ company: z.looseObject({ name: z.string(), industry: z.string() }) })
          .describe('Who the product is for: at least company.name and company.industry'),
        discoveryAnswers: z.record(z.string(), z.unknown()).optional().describe("Answers the kit reads, e.g. {\"entities\": [\"Customer\", \"Order\"]} (see the kit's example input)"),
        dryRun: z.boolean().optional().describe('Generate and validate only; APPLY does not run'),
        version: z.string().optional().describe('A published version of the kit; the latest when absent'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ dryRun, ...input }) => calling(() => client.kitExecutions.execute.mutate({ ...input, options: { dryRun: dryRun ?? false, skipApply: false } })),
  );

  server.registerTool(
    'get_execution',
    {
      title: 'Get a kit execution',
      description: "A run's status, phases, the kit's log, and its outputs (files) with their validation results; read one with get_output.",
      inputSchema: { orgId, executionId },
      annotations: reads,
    },
    (input) => calling(() => client.kitExecutions.get.query(input)),
  );

  server.registerTool(
    'get_output',
    {
      title: 'Read a generated file',
      description: 'The content of one output of an execution (an OpenAPI document, a SQL schema, a Markdown page, …) with its validation result.',
      inputSchema: { orgId, executionId, outputId: z.string().describe('The outputId of an output get_execution lists') },
      annotations: reads,
    },
    (input) => calling(() => client.kitExecutions.output.query(input)),
  );
}
