import { sql, type Kysely } from 'kysely';
import { databaseNow } from '../../db/database-clock.ts';
import { projectIdsInScope, type ProjectScope } from '../projects/projects.repository.ts';
import type { AgentCallRow, AgentExecutionRow, AgentStrategy, AgentTask, Database } from '../../db/database.ts';

export async function insertAgentExecution(
  db: Kysely<Database>,
  values: {
    tenantId: string;
    projectId: string;
    strategy: AgentStrategy;
    agents: string[];
    options: Record<string, unknown>;
    input: Record<string, unknown>;
    tokenLimit: number;
    costLimitUsd: number;
    totalSteps: number;
    createdBy: string | null;
  },
): Promise<AgentExecutionRow> {
  return db
    .insertInto('agent_executions')
    .values({
      tenant_id: values.tenantId,
      project_id: values.projectId,
      strategy: values.strategy,
      agents: values.agents,
      options: JSON.stringify(values.options),
      input: JSON.stringify(values.input),
      token_limit: values.tokenLimit,
      cost_limit_usd: values.costLimitUsd,
      total_steps: values.totalSteps,
      created_by: values.createdBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findAgentExecution(db: Kysely<Database>, tenantId: string, executionId: string, lock?: 'update'): Promise<AgentExecutionRow | undefined> {
  let query = db.selectFrom('agent_executions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', executionId);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** A failed execution back to running with the budget given; false when it is no longer failed at that checkpoint. */
export async function resumeAgentExecution(db: Kysely<Database>, tenantId: string, executionId: string, checkpoint: string, budget: { tokenLimit: number; costLimitUsd: number }): Promise<boolean> {
  const result = await db
    .updateTable('agent_executions')
    .set({ status: 'running', error_code: null, error_message: null, checkpoint: null, token_limit: budget.tokenLimit, cost_limit_usd: budget.costLimitUsd, updated_at: databaseNow })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', executionId)
    .where('status', '=', 'failed')
    .where('checkpoint', '=', checkpoint)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The execution's calls, in the order they were made (calls of one millisecond by step). */
export async function listAgentCalls(db: Kysely<Database>, tenantId: string, executionId: string): Promise<AgentCallRow[]> {
  return db.selectFrom('agent_calls').selectAll().where('tenant_id', '=', tenantId).where('execution_id', '=', executionId).orderBy('created_at').orderBy('step').orderBy('id').execute();
}

/**
 * Records a call and what it spent on its execution, in one statement each of one transaction the
 * caller holds; false when the execution is no longer running (its project was deleted, or it was
 * failed under the call) — the call is then not recorded either.
 */
export async function recordAgentCall(
  db: Kysely<Database>,
  call: {
    tenantId: string;
    executionId: string;
    step: number;
    agent: string;
    task: AgentTask;
    provider: string;
    model: string;
    promptHash: string;
    inputTokens: number;
    outputTokens: number;
    costUsd: number;
    finishReason: 'stop' | 'length' | 'error';
    output: unknown;
  },
): Promise<boolean> {
  const spent = await db
    .updateTable('agent_executions')
    .set((eb) => ({
      tokens_used: eb('tokens_used', '+', call.inputTokens + call.outputTokens),
      cost_usd: sql<string>`cost_usd + ${call.costUsd}::numeric`,
      completed_steps: eb('completed_steps', '+', call.finishReason === 'stop' ? 1 : 0),
      updated_at: databaseNow,
    }))
    .where('tenant_id', '=', call.tenantId)
    .where('id', '=', call.executionId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  if (Number(spent.numUpdatedRows) !== 1) return false;
  await db
    .insertInto('agent_calls')
    .values({
      tenant_id: call.tenantId,
      execution_id: call.executionId,
      step: call.step,
      agent: call.agent,
      task: call.task,
      provider: call.provider,
      model: call.model,
      prompt_hash: call.promptHash,
      input_tokens: call.inputTokens,
      output_tokens: call.outputTokens,
      cost_usd: call.costUsd,
      finish_reason: call.finishReason,
      output: call.output === null ? null : JSON.stringify(call.output),
    })
    .execute();
  return true;
}

export async function setCurrentStep(db: Kysely<Database>, executionId: string, currentStep: string): Promise<void> {
  await db.updateTable('agent_executions').set({ current_step: currentStep, updated_at: databaseNow }).where('id', '=', executionId).where('status', '=', 'running').execute();
}

export async function failAgentExecution(db: Kysely<Database>, executionId: string, failure: { code: string; message: string; checkpoint: string }): Promise<void> {
  await db
    .updateTable('agent_executions')
    .set({ status: 'failed', error_code: failure.code, error_message: failure.message, checkpoint: failure.checkpoint, updated_at: databaseNow })
    .where('id', '=', executionId)
    .where('status', '=', 'running')
    .execute();
}

export async function completeAgentExecution(db: Kysely<Database>, executionId: string, outcome: { specificationId: string; validationPassed: boolean }): Promise<boolean> {
  const result = await db
    .updateTable('agent_executions')
    .set({ status: 'completed', specification_id: outcome.specificationId, validation_passed: outcome.validationPassed, current_step: null, completed_at: databaseNow, updated_at: databaseNow })
    .where('id', '=', executionId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Marks failed every execution still running whose job can no longer run it (gone, or out of
 * attempts and not held by a worker) and that has not moved for `minutes`; each gets a checkpoint
 * to resume from. Answers how many.
 */
export async function failStrandedAgentExecutions(db: Kysely<Database>, minutes: number): Promise<number> {
  const result = await db
    .updateTable('agent_executions as e')
    .set({
      status: 'failed',
      error_code: 'agent_error',
      error_message: 'The run was interrupted; resume it from its checkpoint',
      checkpoint: sql<string>`gen_random_uuid()`,
      updated_at: databaseNow,
    })
    .where('e.status', '=', 'running')
    .where('e.updated_at', '<', sql<Date>`now() - make_interval(mins => ${minutes})`)
    .where(({ not, exists }) =>
      not(exists(sql`(select 1 from graphile_worker.jobs j where j.key = 'agent-execution:' || e.id::text and (j.attempts < j.max_attempts or j.locked_at is not null))`)),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** An agent's part in one execution, as GET /agents/memory reports it. */
export interface AgentSessionRow {
  execution_id: string;
  agent: string;
  calls: number;
  tokens: number;
  first_activity: Date;
  last_activity: Date;
}

/**
 * The sessions (one per execution and agent) of the executions whose projects the scope sees,
 * oldest execution first, each's in the order of its plan; and their totals.
 */
export async function listAgentSessions(
  db: Kysely<Database>,
  scope: ProjectScope,
  filter: { executionId?: string | undefined; agent?: string | undefined },
  page: { limit: number; offset: number },
) {
  let sessions = db
    .selectFrom('agent_calls as c')
    .innerJoin('agent_executions as e', (join) => join.onRef('e.id', '=', 'c.execution_id').onRef('e.tenant_id', '=', 'c.tenant_id'))
    .where('c.tenant_id', '=', scope.tenantId)
    .select((eb) => [
      'c.execution_id',
      'c.agent',
      eb.fn.countAll<number>().as('calls'),
      sql<number>`sum(c.input_tokens + c.output_tokens)::bigint`.as('tokens'),
      eb.fn.min('c.created_at').as('first_activity'),
      eb.fn.max('c.created_at').as('last_activity'),
      'e.started_at',
      eb.fn.min('c.step').as('first_step'),
    ])
    .groupBy(['c.execution_id', 'c.agent', 'e.started_at']);
  if (scope.userId) sessions = sessions.where('e.project_id', 'in', projectIdsInScope(db, scope));
  if (filter.executionId) sessions = sessions.where('c.execution_id', '=', filter.executionId);
  if (filter.agent) sessions = sessions.where('c.agent', '=', filter.agent);
  const all = db.selectFrom(sessions.as('s'));
  const [rows, totals] = await Promise.all([
    // By execution, oldest first, then by the step of each agent's first call: the plan's order,
    // whichever of a parallel wave's calls happened to answer first.
    all.selectAll().orderBy('started_at').orderBy('execution_id').orderBy('first_step').orderBy('agent').limit(page.limit).offset(page.offset).execute(),
    all
      .select((eb) => [
        eb.fn.countAll<number>().as('sessions'),
        sql<number>`coalesce(sum(calls), 0)::bigint`.as('calls'),
        sql<number>`coalesce(sum(tokens), 0)::bigint`.as('tokens'),
      ])
      .executeTakeFirstOrThrow(),
  ]);
  return { rows: rows as AgentSessionRow[], totals: { sessions: Number(totals.sessions), calls: Number(totals.calls), tokens: Number(totals.tokens) } };
}

/** Deletes the project's agent executions and their calls; answers how many of each went. */
export async function deleteAgentExecutionsOfProject(db: Kysely<Database>, tenantId: string, projectId: string): Promise<{ executions: number; calls: number }> {
  const calls = await db
    .deleteFrom('agent_calls')
    .where('tenant_id', '=', tenantId)
    .where('execution_id', 'in', (eb) => eb.selectFrom('agent_executions').select('id').where('tenant_id', '=', tenantId).where('project_id', '=', projectId))
    .executeTakeFirst();
  const executions = await db.deleteFrom('agent_executions').where('tenant_id', '=', tenantId).where('project_id', '=', projectId).executeTakeFirst();
  return { executions: Number(executions.numDeletedRows), calls: Number(calls.numDeletedRows) };
}
