import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { SpecwrightClient } from '../client.ts';
import { registerAgentTools } from './agent-tools.ts';
import { registerFlowTools } from './flow-tools.ts';
import { registerSpecificationTools } from './specification-tools.ts';
import { registerTaskTools } from './task-tools.ts';
import { projectId, reads, type ToolRequest } from './tool-shapes.ts';
import { answered, answeredFile, failed } from './tool-results.ts';

/**
 * The tools a coding assistant gets: find the caller's organizations and projects, start a project,
 * run a kit on it, and read what the kit generated. Inputs are described here for the assistant and
 * checked by the service (its VALIDATION_ERROR comes back naming the field), so the two never
 * disagree about what is allowed. Each tool's input is a strict object: a field the tool does not
 * take is refused by name, not dropped: dropped, the API's own `options: {dryRun: true}` sent to
 * execute_kit ran the kit's APPLY, answering success.
 */
const orgId = z.string().describe('An organization id (list_organizations)');
const executionId = z.string().describe('An execution id (execute_kit answers it; list_executions lists them)');
const kitId = z.string().describe('A kit id (list_kits), e.g. openapi-api');
// The service's bounds, also in the schema the assistant reads (unbounded, it said any integer went).
const paging = {
  limit: z.number().int().min(1).max(200).optional().describe('At most this many (default 50, at most 200)'),
  offset: z.number().int().min(0).optional().describe('Skip this many (default 0)'),
};


/**
 * Runs one call of the client and answers its data, or why it failed. The call is aborted with the
 * request: left running, a cancelled call kept its HTTP request open, and one to a service that
 * does not answer kept the process alive after the assistant closed stdin.
 */
export function registerSpecwrightTools(server: McpServer, client: SpecwrightClient, apiKey: string): void {
  async function calling<Data>(request: ToolRequest, call: (options: ToolRequest) => Promise<Data>, answer: (data: Data) => CallToolResult = answered): Promise<CallToolResult> {
    try {
      return answer(await call({ signal: request.signal }));
    } catch (error) {
      return failed(error, apiKey);
    }
  }

  server.registerTool(
    'whoami',
    { title: 'Who am I', description: 'The user the API key belongs to, and the tenant its calls act in.', annotations: reads },
    (request) => calling(request, (options) => client.me.get.query(undefined, options)),
  );

  server.registerTool(
    'list_organizations',
    { title: 'List organizations', description: 'The organizations the caller is a member of, oldest first. Kits run within an organization.', inputSchema: z.strictObject(paging), annotations: reads },
    (input, request) => calling(request, (options) => client.organizations.list.query(input, options)),
  );

  server.registerTool(
    'list_projects',
    {
      title: 'List projects',
      description: 'The projects the caller can see, oldest first, with their phase and progress.',
      inputSchema: z.strictObject({ status: z.enum(['active', 'completed', 'archived', 'all']).optional().describe('Only projects of this status, or all (the default)'), ...paging }),
      annotations: reads,
    },
    (input, request) => calling(request, (options) => client.projects.list.query(input, options)),
  );

  server.registerTool(
    'get_project',
    { title: 'Get a project', description: 'One project in detail: phase, timings, discovery output, selected features and progress.', inputSchema: z.strictObject({ projectId }), annotations: reads },
    (input, request) => calling(request, (options) => client.projects.get.query(input, options)),
  );

  server.registerTool(
    'create_project',
    {
      title: 'Create a project',
      description: 'Starts a project (status active, phase CREATED) in organizationId, or else in the first organization the caller joined as member, admin or owner.',
      inputSchema: z.strictObject({
        name: z.string().describe('The project name'),
        description: z.string().optional().describe('What the product is'),
        metadata: z.record(z.string(), z.unknown()).optional().describe('Free-form JSON kept with the project'),
        organizationId: z.string().optional().describe('An organization id (list_organizations) the caller is a member, admin or owner of'),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (input, request) => calling(request, (options) => client.projects.create.mutate(input, options)),
  );

  registerFlowTools(server, client, calling);
  registerSpecificationTools(server, client, calling);
  registerAgentTools(server, client, calling);
  registerTaskTools(server, client, calling);

  server.registerTool(
    'list_kits',
    {
      title: 'List kits',
      description: 'The kits an organization can run (its own and the built-in ones: OpenAPI documents, database schemas, docs, …), with their latest version.',
      inputSchema: z.strictObject({ orgId, ...paging }),
      annotations: reads,
    },
    (input, request) => calling(request, (options) => client.kits.list.query(input, options)),
  );

  server.registerTool(
    'get_kit',
    {
      title: 'Get a kit',
      description: "A kit's latest manifest — what it makes (outputs), which inputs it requires (inputs.required, e.g. discoveryAnswers.entities), its phases and credentials — and its published versions.",
      inputSchema: z.strictObject({ orgId, kitId }),
      annotations: reads,
    },
    (input, request) => calling(request, (options) => client.kits.get.query(input, options)),
  );

  server.registerTool(
    'execute_kit',
    {
      title: 'Run a kit on a project',
      description:
        'Starts a run of a kit on a project and answers its execution id; poll get_execution until its status is completed, partial or failed. ' +
        "Unless dryRun is true, the kit's APPLY step runs too (it may push or deploy, as the kit does, with the organization's stored credentials).",
      inputSchema: z.strictObject({
        orgId,
        kitId,
        projectId,
        businessProfile: z
          .looseObject({ company: z.looseObject({ name: z.string(), industry: z.string() }) })
          .describe('Who the product is for: at least company.name and company.industry'),
        discoveryAnswers: z.record(z.string(), z.unknown()).optional().describe("Answers the kit reads, e.g. {\"entities\": [\"Customer\", \"Order\"]} (get_kit shows which it requires)"),
        specificationId: z.string().optional().describe("A completed specification of the project (compile_specification): its entities become the kit's discoveryAnswers.entities"),
        dryRun: z.boolean().optional().describe("Skip APPLY (nothing is pushed or deployed); every other phase, the kit's VERIFY included, runs"),
        version: z.string().optional().describe('A published version of the kit; the latest when absent'),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ dryRun, ...input }, request) =>
      calling(request, (options) => client.kitExecutions.execute.mutate({ ...input, options: { dryRun: dryRun ?? false, skipApply: false } }, options)),
  );

  server.registerTool(
    'list_executions',
    {
      title: 'List kit executions',
      description: "An organization's kit runs, oldest first (the latest are on the last page: offset = total − limit), with their status and output counts; narrow them to a project, a kit or a status.",
      inputSchema: z.strictObject({
        orgId,
        projectId: projectId.optional(),
        kitId: kitId.optional(),
        status: z.enum(['pending', 'running', 'completed', 'failed', 'partial']).optional().describe('Only runs in this status'),
        ...paging,
      }),
      annotations: reads,
    },
    (input, request) => calling(request, (options) => client.kitExecutions.list.query(input, options)),
  );

  server.registerTool(
    'get_execution',
    {
      title: 'Get a kit execution',
      description: "A run's status, phases, the kit's log, and its outputs (files) with their validation results; read one with get_output.",
      inputSchema: z.strictObject({ orgId, executionId }),
      annotations: reads,
    },
    (input, request) => calling(request, (options) => client.kitExecutions.get.query(input, options)),
  );

  server.registerTool(
    'get_output',
    {
      title: 'Read a generated file',
      description: 'One output of an execution (an OpenAPI document, a SQL schema, a Markdown page, …): its filename and validation result, then its content as it is.',
      inputSchema: z.strictObject({ orgId, executionId, outputId: z.string().describe('The outputId of an output get_execution lists') }),
      annotations: reads,
    },
    (input, request) => calling(request, (options) => client.kitExecutions.output.query(input, options), answeredFile),
  );
}
