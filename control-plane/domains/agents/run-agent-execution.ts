import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { AiProviderError, costOf, type AiProvider, type DraftResult, type DraftUsage } from '../../ai/ai-provider.ts';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import type { AgentExecutionRow, Database } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { compileSpecification, validateSpecification, type CompileInput, type CompileOptions } from '../specifications/compile-specification.ts';
import { completeSpecification, insertSpecification, nextSpecificationVersion } from '../specifications/specifications.repository.ts';
import { agentCallRequest, reviewOutput, type AgentCallContext } from './agent-call-request.ts';
import { allowanceFor, waveFitsAtOnce, type Budget } from './agent-budget.ts';
import type { AgentName } from './agent-roster.ts';
import { planSteps, wavesOf, type PlannedStep } from './agent-strategies.ts';
import { assembleSections } from './assemble-specification.ts';
import { completeAgentExecution, failAgentExecution, findAgentExecution, listAgentCalls, recordAgentCall, setCurrentStep } from './agents.repository.ts';

export interface AgentRunDeps {
  ownerDb: Kysely<Database>;
  log: Logger;
  provider: AiProvider;
  /** AI_MAX_OUTPUT_TOKENS: the most one call may write, whatever the budget leaves. */
  maxOutputTokens: number;
  /** Aborted when the worker stops: a call in flight is given up, and the job runs again later. */
  signal?: AbortSignal;
}

/** What PostgreSQL's jsonb stores: no NUL, no unpaired surrogate, at any depth. */
const storableJson = z.unknown().superRefine(refuseUnstorableText);

/** Why an execution stops failed: the seed's budget_exceeded, or the provider's or a model's failure. */
class ExecutionStop extends Error {
  readonly code: 'budget_exceeded' | 'agent_error';
  constructor(code: 'budget_exceeded' | 'agent_error', message: string) {
    super(message);
    this.code = code;
  }
}

/** The execution stopped being ours to run (failed, or deleted with its project) while a call was made. */
class ExecutionGone extends Error {}

/**
 * Runs an execution from where it stands: the steps already done (their calls recorded with
 * output) are read, not made again, so a job that runs twice, a retry and a resume all continue
 * rather than repeat. Each call is checked against the budget before it is made and recorded with
 * what it spent once it returns; the last step done, the specification is assembled, validated and
 * stored, and the execution completed with it. A budget overrun or a provider's refusal fails the
 * execution with a fresh checkpoint to resume from; a failure worth retrying (a timeout, a 5xx) is
 * thrown for the job to try again.
 */
export async function runAgentExecution(deps: AgentRunDeps, tenantId: string, executionId: string): Promise<void> {
  const { ownerDb, log } = deps;
  const execution = await findAgentExecution(ownerDb, tenantId, executionId);
  if (!execution || execution.status !== 'running') {
    log.info('agent execution no longer running, or deleted with its project; nothing to do');
    return;
  }
  const input = execution.input as unknown as CompileInput;
  const options = execution.options as unknown as CompileOptions;
  const steps = planSteps(execution.strategy, execution.agents as AgentName[]);
  const outputs = new Map<number, unknown>();
  for (const call of await listAgentCalls(ownerDb, tenantId, executionId)) if (call.output !== null) outputs.set(call.step, call.output);
  const budget: Budget = { tokenLimit: execution.token_limit, costLimitUsd: Number(execution.cost_limit_usd), tokensUsed: execution.tokens_used, costUsd: Number(execution.cost_usd) };
  const team = steps.filter((step) => step.task === 'draft');

  try {
    for (const wave of wavesOf(steps)) {
      const pending = wave.filter((step) => !outputs.has(step.step)).map((step) => prepareCall(deps, step, { step, input, options, team, read: step.reads.map((read) => ({ step: steps[read - 1]!, output: outputs.get(read) })) }));
      if (pending.length === 0) continue;
      const runCall = async (call: PreparedCall, maxOutputTokens: number) => outputs.set(call.step.step, await makeCall(deps, execution, budget, call, maxOutputTokens));
      if (pending.length > 1 && waveFitsAtOnce(budget, pending.map((call) => call.inputTokens), deps.provider.prices, deps.maxOutputTokens)) {
        // Room for every call's longest answer at once: they run together, none cut by another's spending.
        const settled = await Promise.allSettled(pending.map((call) => runCall(call, deps.maxOutputTokens)));
        const failures = settled.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
        // The failure that ends the run wins over one a retry would follow: a retry would make, and pay for, a spent call again.
        if (failures.length > 0) throw failures.find((reason) => reason instanceof ExecutionGone) ?? failures.find((reason) => !isRetryable(reason)) ?? failures[0];
      } else {
        // Otherwise one after another, each with what the budget has left when its turn comes.
        for (const call of pending) {
          const allowance = allowanceFor(budget, call.inputTokens, deps.provider.prices, deps.maxOutputTokens);
          if ('exceeded' in allowance) throw new ExecutionStop('budget_exceeded', `Step ${call.step.step} (${describe(call.step)}) was not started: ${allowance.exceeded}`);
          await runCall(call, allowance.maxOutputTokens);
        }
      }
    }
  } catch (error) {
    // The worker is stopping: whatever the call said, the run is not over; the job runs it again.
    if (deps.signal?.aborted) throw error;
    if (error instanceof ExecutionGone) return log.info('agent execution stopped running during a call; its call was not recorded');
    if (error instanceof ExecutionStop) return stop(deps, executionId, error.code, error.message);
    if (error instanceof AiProviderError && !error.retryable) return stop(deps, executionId, 'agent_error', error.message);
    throw error;
  }
  await finish(deps, execution, steps, outputs, input, options);
}

/** Whether the job should try the run again for this failure; a stop, or a provider's refusal, ends it. */
function isRetryable(error: unknown): boolean {
  if (error instanceof ExecutionGone || error instanceof ExecutionStop) return false;
  return !(error instanceof AiProviderError && !error.retryable);
}

interface PreparedCall {
  step: PlannedStep;
  context: AgentCallContext;
  request: ReturnType<typeof agentCallRequest>;
  inputTokens: number;
}

function prepareCall(deps: AgentRunDeps, step: PlannedStep, context: AgentCallContext): PreparedCall {
  const request = agentCallRequest(context);
  return { step, context, request, inputTokens: deps.provider.countTokens(`${request.system}\n\n${request.prompt}`) };
}

function describe(step: PlannedStep): string {
  return step.task === 'plan' || step.task === 'review' ? `${step.agent}'s ${step.task}` : `${step.agent}'s ${step.task} of ${step.sections.join(', ')}`;
}

/** Makes one call and records it with what it spent; answers its output, or throws why the execution stops. */
async function makeCall(deps: AgentRunDeps, execution: AgentExecutionRow, budget: Budget, call: PreparedCall, maxOutputTokens: number): Promise<unknown> {
  const { provider, ownerDb } = deps;
  await setCurrentStep(ownerDb, execution.id, `${call.step.step}/${describe(call.step)}`);
  let result: DraftResult;
  try {
    result = await provider.draft({ agent: call.step.agent, system: call.request.system, prompt: call.request.prompt, schema: call.request.schema, maxOutputTokens, context: call.context, ...(deps.signal ? { signal: deps.signal } : {}) });
  } catch (error) {
    // A model that answered what the schema refuses was paid for: the call is recorded with its spending.
    if (error instanceof AiProviderError && error.usage) await record(deps, execution, budget, call, { usage: error.usage, finishReason: 'error', output: null });
    throw error;
  }
  // An answer the database cannot store (a NUL, an unpaired surrogate) is one the run cannot use either.
  if (result.finishReason === 'stop' && !storableJson.safeParse(result.output).success) {
    await record(deps, execution, budget, call, { usage: result.usage, finishReason: 'error', output: null, model: result.model });
    throw new ExecutionStop('agent_error', `Step ${call.step.step} (${describe(call.step)}) answered text that cannot be stored (a NUL character or an unpaired surrogate)`);
  }
  await record(deps, execution, budget, call, { usage: result.usage, finishReason: result.finishReason, output: result.finishReason === 'stop' ? result.output : null, model: result.model });
  if (result.finishReason === 'length') {
    if (maxOutputTokens < deps.maxOutputTokens) {
      throw new ExecutionStop('budget_exceeded', `Step ${call.step.step} (${describe(call.step)}) was cut off at ${maxOutputTokens} tokens, all the budget had left; the tokens it spent are counted`);
    }
    throw new ExecutionStop('agent_error', `Step ${call.step.step} (${describe(call.step)}) wrote more than AI_MAX_OUTPUT_TOKENS (${deps.maxOutputTokens}) tokens`);
  }
  return result.output;
}

/**
 * Records a call and adds what it spent to the execution, in one transaction: the spending is never
 * counted without its call, nor the call kept without its spending. Throws ExecutionGone when the
 * execution is no longer running (the call is then not recorded).
 */
async function record(deps: AgentRunDeps, execution: AgentExecutionRow, budget: Budget, call: PreparedCall, outcome: { usage: DraftUsage; finishReason: 'stop' | 'length' | 'error'; output: unknown; model?: string | undefined }) {
  const { provider } = deps;
  const costUsd = costOf(outcome.usage, provider.prices);
  const recorded = await deps.ownerDb.transaction().execute((trx) =>
    recordAgentCall(trx, {
      tenantId: execution.tenant_id,
      executionId: execution.id,
      step: call.step.step,
      agent: call.step.agent,
      task: call.step.task,
      provider: provider.name,
      // The version that answered, when the provider says; else the model asked for.
      model: outcome.model ?? provider.model,
      promptHash: call.request.promptHash,
      inputTokens: outcome.usage.inputTokens,
      outputTokens: outcome.usage.outputTokens,
      costUsd,
      finishReason: outcome.finishReason,
      output: outcome.output,
    }),
  );
  if (!recorded) throw new ExecutionGone();
  budget.tokensUsed += outcome.usage.inputTokens + outcome.usage.outputTokens;
  budget.costUsd += costUsd;
}

async function stop(deps: AgentRunDeps, executionId: string, code: 'budget_exceeded' | 'agent_error', message: string): Promise<void> {
  await failAgentExecution(deps.ownerDb, executionId, { code, message, checkpoint: randomUUID() });
  deps.log.info({ code }, 'agent execution failed; it may be resumed from its checkpoint');
}

/**
 * The specification the steps drafted: their sections over the compiler's, under the service's
 * metadata, with the supervisor's review (if any) among its warnings. Stored as the project's next
 * specification version and the execution completed with it, in one transaction holding the
 * project (versions are numbered under its lock).
 */
async function finish(deps: AgentRunDeps, execution: AgentExecutionRow, steps: PlannedStep[], outputs: Map<number, unknown>, input: CompileInput, options: CompileOptions) {
  const { provider } = deps;
  await deps.ownerDb.transaction().execute(async (trx) => {
    const project = await trx.selectFrom('projects').select('id').where('tenant_id', '=', execution.tenant_id).where('id', '=', execution.project_id).forUpdate().executeTakeFirst();
    const current = await findAgentExecution(trx, execution.tenant_id, execution.id, 'update');
    if (!project || current?.status !== 'running') return;
    const version = await nextSpecificationVersion(trx, execution.tenant_id, execution.project_id);
    const compiled = compileSpecification(input, options, version).spec;
    const drafts = steps.filter((step) => step.task === 'draft' || step.task === 'revise').map((step) => ({ step, output: outputs.get(step.step) }));
    const { spec, draftedBy } = assembleSections(compiled, drafts);
    const assembled = { ...spec, metadata: { ...compiled.metadata, generator: `specwright-agents/1 (${provider.name}/${provider.model}, ${execution.strategy})`, draftedBy } };
    const validation = validateSpecification(assembled, input);
    const review = steps.find((step) => step.task === 'review');
    const verdict = review ? reviewOutput.parse(outputs.get(review.step)) : null;
    if (verdict && !verdict.approved) validation.warnings.push({ code: 'review_not_approved', message: `The supervisor did not approve: ${verdict.notes.join('; ') || 'no reason given'}` });
    const specification = await insertSpecification(trx, {
      tenantId: execution.tenant_id,
      projectId: execution.project_id,
      version,
      options: { ...options },
      input: { ...input },
      createdBy: execution.created_by,
    });
    await completeSpecification(trx, specification.id, { spec: assembled, validation });
    await completeAgentExecution(trx, execution.id, { specificationId: specification.id, validationPassed: validation.passed });
  });
}
