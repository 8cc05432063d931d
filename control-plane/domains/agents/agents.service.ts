import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import { countTokens } from '../../ai/token-count.ts';
import type { AiConfig } from '../../config.ts';
import type { AgentExecutionRow, Database } from '../../db/database.ts';
import { AppError, conflict, notFound } from '../../errors/app-error.ts';
import { addJob } from '../../jobs/add-job.ts';
import { requireProjectMember } from '../projects/project-member.ts';
import { projectScopeFor } from '../projects/project-scope.ts';
import { requireProjectForCaller } from '../projects/project-for-caller.ts';
import { findProject } from '../projects/projects.repository.ts';
import type { CompileInput, CompileOptions } from '../specifications/compile-specification.ts';
import { findSpecification } from '../specifications/specifications.repository.ts';
import type { CompiledSpec } from '../specifications/specifications.schema.ts';
import { compileInputOf, compileOptionsFor } from '../specifications/specifications.service.ts';
import { agentCallRequest } from './agent-call-request.ts';
import { allowanceFor, formatDollars } from './agent-budget.ts';
import { agentNames } from './agent-roster.ts';
import { planSteps, type PlannedStep } from './agent-strategies.ts';
import { AGENT_JOB_ATTEMPTS, agentJobKey, generateSpecJob } from './generate-spec.job.ts';
import type { AgentExecutionOutput, GenerateSpecInput, MemoryInput, ResumeInput } from './agents.schema.ts';
import { findAgentExecution, insertAgentExecution, listAgentCalls, listAgentSessions, resumeAgentExecution } from './agents.repository.ts';

const statusUrlOf = (executionId: string) => `/api/agents/execution/${executionId}/status`;

/**
 * The project, locked, for a caller who may have agents draft its specification: its members,
 * admins and owners (customers are FORBIDDEN), whose access is share-locked with it; a removal
 * that answered first leaves it NOT_FOUND. `unseen` names what the caller asked for (the project,
 * or an execution of it), so a project they do not see answers as an unknown id of that would.
 */
async function requireDraftableProject(db: Kysely<Database>, principal: Principal, projectId: string, unseen: string) {
  const project = await requireProjectForCaller(db, principal, projectId, { lock: 'update', unseen });
  await requireProjectMember(db, principal, project, 'has agents draft its specification');
  return project;
}

/**
 * Refuses a budget the execution's first call could not fit (BUDGET_EXCEEDED, 402), before anything
 * is stored: the prompt is counted as the worker will count it.
 */
function requireRoomForFirstCall(step: PlannedStep, input: CompileInput, options: CompileOptions, team: PlannedStep[], budget: { tokenLimit: number; costLimitUsd: number; tokensUsed: number; costUsd: number }, ai: AiConfig) {
  const request = agentCallRequest({ step, input, options, team, read: [] });
  const allowance = allowanceFor(budget, countTokens(`${request.system}\n\n${request.prompt}`), ai.prices, ai.maxOutputTokens);
  if ('exceeded' in allowance) throw new AppError('BUDGET_EXCEEDED', `The budget cannot pay for the first call (${step.agent}): ${allowance.exceeded}`, { code: 'budget_exceeded' });
}

/**
 * Has agents draft the project's specification from what its flow says now (agent class of the rate
 * limit): the execution and its job are stored together, and the worker runs it under the budget.
 */
export async function generateSpec(db: Kysely<Database>, principal: Principal, ai: AiConfig, input: GenerateSpecInput) {
  const project = await requireDraftableProject(db, principal, input.projectId, 'The project');
  if (project.phase === 'CREATED') throw conflict('The flow has not started, so there is nothing to draft from: POST /flow/start begins discovery');
  const strategy = input.options?.strategy ?? 'sequential';
  const agents = input.options?.agents ?? agentNames;
  const steps = planSteps(strategy, agents);
  const compileInput = await compileInputOf(db, project);
  const options = compileOptionsFor(input.options, compileInput);
  const budget = { tokenLimit: input.options?.budget?.maxTokens ?? ai.defaultBudget.maxTokens, costLimitUsd: input.options?.budget?.maxCostUSD ?? ai.defaultBudget.maxCostUsd, tokensUsed: 0, costUsd: 0 };
  requireRoomForFirstCall(steps[0]!, compileInput, options, steps.filter((step) => step.task === 'draft'), budget, ai);
  const execution = await insertAgentExecution(db, {
    tenantId: project.tenant_id,
    projectId: project.id,
    strategy,
    agents: [...agents],
    options: { ...options },
    input: { ...compileInput },
    tokenLimit: budget.tokenLimit,
    costLimitUsd: budget.costLimitUsd,
    totalSteps: steps.length,
    createdBy: principal.tenantId === principal.homeTenantId ? principal.userId : null,
  });
  await enqueueRun(db, execution);
  return startedOf(execution);
}

async function enqueueRun(db: Kysely<Database>, execution: AgentExecutionRow) {
  // The payload names the execution only: its input and budget stay in the database.
  await addJob(db, generateSpecJob.name, { executionId: execution.id, tenantId: execution.tenant_id }, { jobKey: agentJobKey(execution.id), maxAttempts: AGENT_JOB_ATTEMPTS });
}

function startedOf(execution: AgentExecutionRow) {
  return { executionId: execution.id, status: 'running' as const, strategy: execution.strategy, agents: execution.agents, startedAt: execution.started_at.toISOString(), statusUrl: statusUrlOf(execution.id) };
}

/**
 * Continues a failed execution from its checkpoint with a new budget (or its old one): the steps
 * done stay done and their spending counted. Only the checkpoint of its latest failure resumes it.
 */
export async function resumeExecution(db: Kysely<Database>, principal: Principal, ai: AiConfig, input: ResumeInput) {
  const execution = await findAgentExecution(db, principal.tenantId, input.executionId);
  if (!execution) throw notFound('The agent execution');
  await requireDraftableProject(db, principal, execution.project_id, 'The agent execution');
  // Not locked (the app role may lock only a failed execution, as it may update only one): the
  // update below takes it only if it is still failed at this checkpoint, else a resume won the race.
  if (execution.status !== 'failed') throw conflict(`The execution is ${execution.status}; only a failed one resumes`);
  if (execution.checkpoint !== input.checkpoint) throw conflict("The checkpoint is not this execution's latest: read error.checkpoint from its status");
  const budget = { tokenLimit: input.budget?.maxTokens ?? execution.token_limit, costLimitUsd: input.budget?.maxCostUSD ?? Number(execution.cost_limit_usd) };
  // Dollars not above those spent pay for no call, unless calls cost nothing (no prices set).
  const callsCost = ai.prices.inputPerMillionUsd > 0 || ai.prices.outputPerMillionUsd > 0;
  const costSpent = Number(execution.cost_usd);
  if (budget.tokenLimit <= execution.tokens_used || budget.costLimitUsd < costSpent || (callsCost && budget.costLimitUsd === costSpent)) {
    throw new AppError(
      'BUDGET_EXCEEDED',
      `The budget leaves nothing to resume with: ${execution.tokens_used} tokens and $${formatDollars(Number(execution.cost_usd))} are already spent, against ${budget.tokenLimit} tokens and $${formatDollars(budget.costLimitUsd)}`,
      { code: 'budget_exceeded' },
    );
  }
  if (!(await resumeAgentExecution(db, principal.tenantId, execution.id, input.checkpoint, budget))) throw conflict('The execution was resumed meanwhile');
  await enqueueRun(db, execution);
  return startedOf(execution);
}

/** An execution, to whoever sees its project (customers included); NOT_FOUND otherwise. */
export async function getExecution(db: Kysely<Database>, principal: Principal, executionId: string): Promise<AgentExecutionOutput> {
  const execution = await findAgentExecution(db, principal.tenantId, executionId);
  if (!execution || !(await findProject(db, projectScopeFor(principal), execution.project_id))) throw notFound('The agent execution');
  const calls = await listAgentCalls(db, execution.tenant_id, execution.id);
  const specification = execution.specification_id ? await findSpecification(db, execution.tenant_id, execution.specification_id) : undefined;
  return {
    executionId: execution.id,
    projectId: execution.project_id,
    status: execution.status,
    strategy: execution.strategy,
    agents: execution.agents,
    startedAt: execution.started_at.toISOString(),
    completedAt: execution.completed_at?.toISOString() ?? null,
    statusUrl: statusUrlOf(execution.id),
    progress: { completedSteps: execution.completed_steps, totalSteps: execution.total_steps, currentStep: execution.status === 'running' ? execution.current_step : null },
    budget: { tokensUsed: execution.tokens_used, tokensLimit: execution.token_limit, costIncurred: Number(execution.cost_usd), costLimit: Number(execution.cost_limit_usd) },
    result:
      execution.status === 'completed'
        ? { specId: execution.specification_id, spec: (specification?.spec as CompiledSpec | undefined) ?? null, validationPassed: execution.validation_passed ?? false }
        : null,
    error:
      execution.status === 'failed'
        ? { code: execution.error_code as 'budget_exceeded' | 'agent_error', message: execution.error_message ?? '', checkpoint: execution.checkpoint! }
        : null,
    calls: calls.map((call) => ({
      step: call.step,
      agent: call.agent,
      task: call.task,
      provider: call.provider,
      model: call.model,
      promptHash: call.prompt_hash,
      inputTokens: call.input_tokens,
      outputTokens: call.output_tokens,
      costUSD: Number(call.cost_usd),
      finishReason: call.finish_reason,
      createdAt: call.created_at.toISOString(),
    })),
  };
}

/** The agents' sessions (one per execution and agent) in the projects the caller sees. */
export async function listMemory(db: Kysely<Database>, principal: Principal, input: MemoryInput) {
  const { rows, totals } = await listAgentSessions(db, projectScopeFor(principal), { executionId: input.sessionId, agent: input.agentName }, input);
  return {
    sessions: rows.map((row) => ({ sessionId: row.execution_id, agentName: row.agent, messageCount: Number(row.calls) * 2, tokensUsed: Number(row.tokens), lastActivity: new Date(row.last_activity).toISOString() })),
    totals: { totalSessions: totals.sessions, totalMessages: totals.calls * 2, totalTokens: totals.tokens },
    total: totals.sessions,
    limit: input.limit,
    offset: input.offset,
  };
}
