import { z } from 'zod';
import { MAX_AGENT_TOKENS } from '../../config.ts';
import { pagedOutput, pagingInput } from '../../http/paging.ts';
import { uuidInput } from '../../http/uuid-input.ts';
import { compiledSpec } from '../specifications/specifications.schema.ts';
import { agentNames, SUPERVISOR } from './agent-roster.ts';
import { agentStrategies } from './agent-strategies.ts';

/** The most dollars a budget may name: far above any real run, low enough to stay exact in numeric(15, 9). */
export const MAX_BUDGET_USD = 100_000;

const budgetInput = z
  .strictObject({
    maxTokens: z.number().int().min(1).max(MAX_AGENT_TOKENS).optional().describe('Tokens read and written, all calls together; AGENT_DEFAULT_MAX_TOKENS when absent'),
    maxCostUSD: z.number().min(0).max(MAX_BUDGET_USD).optional().describe("US dollars at the model's prices, all calls together; AGENT_DEFAULT_MAX_COST_USD when absent"),
  })
  .describe('What the execution may spend; a call it cannot afford is not made, and the execution fails with budget_exceeded');

export const generateSpecInput = z.strictObject({
  projectId: uuidInput(),
  options: z
    .strictObject({
      strategy: z.enum(agentStrategies).optional().describe('sequential (the default): each agent reads the drafts before its own; parallel: all draft at once from the project alone; hierarchical: a supervisor plans and reviews; debate: all draft, then each revises having read the others'),
      agents: z
        .array(z.enum(agentNames))
        .min(1)
        .max(agentNames.length)
        .refine((agents) => new Set(agents).size === agents.length, 'names an agent twice')
        .optional()
        .describe(`Who drafts, in this order (all when absent): ${agentNames.join(', ')}. Sections no named agent drafts are compiled from the answers`),
      budget: budgetInput.optional(),
      format: z.enum(['v1', 'v2']).optional().describe('As /specification/compile: the specFormat answer when absent, else v1'),
      includeTestPlan: z.boolean().optional().describe('As /specification/compile: the includeTestPlan answer when absent'),
      includeTaskGraph: z.boolean().optional(),
      includeRunbook: z.boolean().optional(),
    })
    .optional(),
});

export const agentExecutionStarted = z.object({
  executionId: z.uuid(),
  status: z.literal('running'),
  strategy: z.enum(agentStrategies),
  agents: z.array(z.string()),
  startedAt: z.iso.datetime(),
  statusUrl: z.string().describe('GET it for progress, spending and the result'),
});

export const executionIdInput = z.object({ executionId: uuidInput() });

export const resumeInput = z.strictObject({
  executionId: uuidInput(),
  checkpoint: uuidInput().describe("The failed execution's error.checkpoint: a resume of an older failure, or a second resume of this one, is CONFLICT"),
  budget: budgetInput.optional().describe('The new budget, counting what was already spent; the failed one when absent'),
});

const call = z.object({
  step: z.number().int(),
  agent: z.string(),
  task: z.enum(['plan', 'draft', 'revise', 'review']),
  provider: z.string(),
  model: z.string(),
  promptHash: z.string().describe('sha256 of the system text and prompt: the same hash, the same call'),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  costUSD: z.number(),
  finishReason: z.enum(['stop', 'length', 'error']).describe('length: cut off at the budget or AI_MAX_OUTPUT_TOKENS; error: an answer the schema refuses or the database cannot store. Either way its output is dropped and its tokens counted'),
  createdAt: z.iso.datetime(),
});

export const agentExecutionOutput = z.object({
  executionId: z.uuid(),
  projectId: z.uuid(),
  status: z.enum(['running', 'completed', 'failed', 'paused']),
  strategy: z.enum(agentStrategies),
  agents: z.array(z.string()),
  startedAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullable(),
  statusUrl: z.string(),
  progress: z.object({ completedSteps: z.number().int(), totalSteps: z.number().int(), currentStep: z.string().nullable().describe('step/what, while running') }),
  budget: z.object({ tokensUsed: z.number().int(), tokensLimit: z.number().int(), costIncurred: z.number().describe('US dollars'), costLimit: z.number().describe('US dollars') }),
  result: z
    .object({ specId: z.uuid().nullable(), spec: compiledSpec.nullable(), validationPassed: z.boolean() })
    .nullable()
    .describe('When completed: the specification stored as the project\'s next version (GET /specification/{specId})'),
  error: z
    .object({ code: z.enum(['budget_exceeded', 'agent_error']), message: z.string(), checkpoint: z.uuid().describe('POST /agents/execution/{executionId}/resume continues from it') })
    .nullable(),
  calls: z.array(call).describe('Every call made, in order, with what it spent; a step cut off and made again appears twice'),
});

export const memoryInput = pagingInput.extend({
  sessionId: uuidInput().optional().describe("An execution's id: its agents' sessions only"),
  agentName: z.enum([...agentNames, SUPERVISOR]).optional(),
});

export const memoryOutput = pagedOutput(
  'sessions',
  z.object({
    sessionId: z.uuid().describe('The execution the agent worked in'),
    agentName: z.string(),
    messageCount: z.number().int().describe('Prompts and answers: two per call'),
    tokensUsed: z.number().int(),
    lastActivity: z.iso.datetime(),
  }),
).extend({
  totals: z.object({ totalSessions: z.number().int(), totalMessages: z.number().int(), totalTokens: z.number().int() }),
  total: z.number().int().describe('Sessions in all pages (totals.totalSessions)'),
});

export type GenerateSpecInput = z.infer<typeof generateSpecInput>;
export type ResumeInput = z.infer<typeof resumeInput>;
export type MemoryInput = z.infer<typeof memoryInput>;
export type AgentExecutionOutput = z.infer<typeof agentExecutionOutput>;
