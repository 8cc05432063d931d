import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { SpecwrightClient } from '../client.ts';
import { projectId, reads, type Calling } from './tool-shapes.ts';

const budget = z
  .strictObject({
    maxTokens: z.number().int().min(1).optional().describe('Tokens read and written by all calls together'),
    maxCostUSD: z.number().min(0).optional().describe("US dollars at the model's prices, all calls together"),
  })
  .describe('What the agents may spend; a call the budget cannot afford is not made');

/**
 * Agents drafting a project's specification as tools: start a run under a budget, follow it, and
 * resume one the budget stopped. The run is queued; get_agent_execution answers `running` until
 * the worker is done.
 */
export function registerAgentTools(server: McpServer, client: SpecwrightClient, calling: Calling): void {
  server.registerTool(
    'generate_spec_with_agents',
    {
      title: "Have agents draft a project's specification",
      description:
        "Agents (analyst, architect, api-designer, qa-engineer, designer) draft the project's specification from its flow's answers, each its own sections, under a token and dollar budget; " +
        'answers an executionId: poll get_agent_execution until its status is completed (result.specId is the new specification) or failed (error.checkpoint resumes it). ' +
        'At most RATE_LIMIT_AGENT_PER_MINUTE (10 by default) runs or resumes a minute; polling get_agent_execution does not count against it.',
      inputSchema: z.strictObject({
        projectId,
        strategy: z.enum(['sequential', 'parallel', 'hierarchical', 'debate']).optional().describe('sequential (default), parallel, hierarchical (a supervisor plans and reviews), debate (draft, then revise)'),
        agents: z.array(z.enum(['analyst', 'architect', 'api-designer', 'qa-engineer', 'designer'])).min(1).optional().describe('Who drafts (all when absent); the other sections are compiled from the answers'),
        budget: budget.optional(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ projectId: project, ...options }, request) => calling(request, (call) => client.agents.generateSpec.mutate({ projectId: project, options }, call)),
  );

  server.registerTool(
    'get_agent_execution',
    {
      title: 'Follow an agent execution',
      description: 'An agent execution: status, progress, budget spent, every call made (model, tokens, cost), and its result (the specification) or its error with a checkpoint.',
      inputSchema: z.strictObject({ executionId: z.string().describe('The executionId generate_spec_with_agents answered') }),
      annotations: reads,
    },
    (input, request) => calling(request, (call) => client.agents.executionStatus.query(input, call)),
  );

  server.registerTool(
    'resume_agent_execution',
    {
      title: 'Resume a failed agent execution',
      description: 'Continues a failed agent execution from its checkpoint (error.checkpoint), with a larger budget if given (counting what was spent); steps done are not made again.',
      inputSchema: z.strictObject({ executionId: z.string(), checkpoint: z.string().describe("The failed execution's error.checkpoint"), budget: budget.optional() }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (input, request) => calling(request, (call) => client.agents.resume.mutate(input, call)),
  );
}
