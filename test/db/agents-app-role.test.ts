import { beforeAll, describe, expect, it } from 'vitest';
import { asAppRoleInTenant, inAppRoleTransaction } from '../helpers/app-role-sql.ts';
import { insertTenantWithUser, ownerQuery } from '../helpers/owner-sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * What a request (the app role) may do to agent executions and calls (migration 0031): insert a
 * fresh execution, resume a failed one, read and delete; never write an outcome, spending, a
 * specification or a call, and enqueue only the run of a running execution of its own tenant.
 */
let database: TestDatabase;
let a: { tenantId: string; userId: string; projectId: string };
let b: { tenantId: string; userId: string; projectId: string };

const q = (text: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, text, values);
const asA = (text: string, values: unknown[] = []) => asAppRoleInTenant(database.appUrl, a.tenantId, text, values);

async function tenantWithProject(email: string) {
  const tenant = await insertTenantWithUser(database.ownerUrl, email);
  const [org] = await q(`insert into organizations (tenant_id, name, slug, owner_id) values ($1, 'o', $3, $2) returning id`, [tenant.tenantId, tenant.userId, email.replace(/\W/g, '-')]);
  const [project] = await q(`insert into projects (tenant_id, organization_id, name) values ($1, $2, 'P') returning id`, [tenant.tenantId, org.id]);
  return { ...tenant, projectId: project.id as string };
}

/** An execution of the tenant's project, as the worker leaves it: `status`, and a failure's checkpoint. */
async function execution(of: { tenantId: string; projectId: string }, status: 'running' | 'failed' | 'completed', spent = { tokens: 0, cost: '0' }): Promise<{ id: string; checkpoint: string | null }> {
  const failed = status === 'failed';
  const [row] = await q(
    `insert into agent_executions (tenant_id, project_id, strategy, agents, options, input, token_limit, cost_limit_usd, total_steps, status, error_code, checkpoint, tokens_used, cost_usd, updated_at)
     values ($1, $2, 'sequential', '{analyst}', '{}', '{}', 1000, 1, 1, $3, $4, $5, $6, $7, now() - interval '1 hour') returning id, checkpoint`,
    [of.tenantId, of.projectId, status, failed ? 'budget_exceeded' : null, failed ? '00000000-0000-4000-8000-00000000c0de' : null, spent.tokens, spent.cost],
  );
  return row;
}

beforeAll(async () => {
  database = await createTestDatabase();
  a = await tenantWithProject('a@a.test');
  b = await tenantWithProject('b@b.test');
});

describe("a request's reach into agent executions", () => {
  it('inserts only a fresh execution: nothing spent, no outcome', async () => {
    const columns = 'tenant_id, project_id, strategy, agents, options, input, token_limit, cost_limit_usd, total_steps';
    const values = `'${a.tenantId}', '${a.projectId}', 'sequential', '{analyst}', '{}', '{}', 10, 1, 1`;
    expect(await asA(`insert into agent_executions (${columns}) values (${values})`)).toBe(1);
    for (const [column, value] of [['status', "'completed'"], ['tokens_used', '5'], ['cost_usd', '1'], ['completed_steps', '1'], ['specification_id', 'gen_random_uuid()'], ['error_code', "'x'"], ['checkpoint', 'gen_random_uuid()'], ['validation_passed', 'true'], ['completed_at', 'now()'], ['started_at', "'2000-01-01'"]]) {
      expect(await asA(`insert into agent_executions (${columns}, ${column}) values (${values}, ${value})`), column).toBe('42501');
    }
    expect(await asA(`insert into agent_executions (${columns}) values ('${b.tenantId}', '${b.projectId}', 'sequential', '{analyst}', '{}', '{}', 10, 1, 1)`)).toBe('42501');
  });

  it('changes no spending, outcome or specification, and turns only a failed execution back to running', async () => {
    const running = await execution(a, 'running');
    const completed = await execution(a, 'completed');
    for (const set of ["status = 'completed'", 'tokens_used = 0', 'cost_usd = 0', 'completed_steps = 5', 'specification_id = null', 'validation_passed = true', 'completed_at = now()', 'current_step = null']) {
      const outcome = await asA(`update agent_executions set ${set} where id = $1`, [running.id]);
      expect(outcome === 0 || outcome === '42501', set).toBe(true);
    }
    expect(await asA(`update agent_executions set token_limit = 999999 where id = $1`, [running.id])).toBe(0);
    expect(await asA(`update agent_executions set status = 'running', token_limit = 999999 where id = $1`, [completed.id])).toBe(0);
    // Nor locks one it may not update: a lock is the app role's only with the update's reach.
    expect(await asA(`select 1 from agent_executions where id = $1 for update`, [running.id])).toBe(0);
    const failed = await execution(a, 'failed');
    // Still failed, or a resume with its failure left behind: refused.
    expect(await asA(`update agent_executions set token_limit = 5000 where id = $1`, [failed.id])).toBe('42501');
    expect(await asA(`update agent_executions set status = 'running', token_limit = 5000 where id = $1`, [failed.id])).toBe('42501');
    expect(await asA(`update agent_executions set status = 'running', error_code = null, error_message = null, checkpoint = null, token_limit = 5000, updated_at = date_trunc('milliseconds', now()) where id = $1`, [failed.id])).toBe(1);
  });

  it("a resume stamps the time it happened: no stamp in the future to hide a run with no job from the sweep, none far back to have it swept at once", async () => {
    const failed = await execution(a, 'failed');
    const resume = (updatedAt: string) =>
      asA(`update agent_executions set status = 'running', error_code = null, error_message = null, checkpoint = null, updated_at = ${updatedAt} where id = $1`, [failed.id]);
    expect(await resume("'infinity'")).toBe('42501');
    expect(await resume("now() + interval '1 year'")).toBe('42501');
    expect(await resume("now() - interval '1 year'")).toBe('42501');
    expect(await resume("date_trunc('milliseconds', now())")).toBe(1);
  });

  it('a resume leaves room in the budget: not below what was already spent', async () => {
    const failed = await execution(a, 'failed', { tokens: 700, cost: '0.5' });
    const resume = (set: string) => asA(`update agent_executions set status = 'running', error_code = null, error_message = null, checkpoint = null, updated_at = date_trunc('milliseconds', now()), ${set} where id = $1`, [failed.id]);
    expect(await resume('token_limit = 700')).toBe('42501');
    expect(await resume('token_limit = 10')).toBe('42501');
    expect(await resume('cost_limit_usd = 0.4')).toBe('42501');
    expect(await resume('token_limit = 701, cost_limit_usd = 0.5')).toBe(1);
  });

  it('writes no call, and changes none', async () => {
    const running = await execution(a, 'running');
    await q(
      `insert into agent_calls (tenant_id, execution_id, step, agent, task, provider, model, prompt_hash, input_tokens, output_tokens, cost_usd, finish_reason, output)
       values ($1, $2, 1, 'analyst', 'draft', 'offline', 'm', repeat('a', 64), 1, 1, 0, 'stop', '{}')`,
      [a.tenantId, running.id],
    );
    expect(
      await asA(
        `insert into agent_calls (tenant_id, execution_id, step, agent, task, provider, model, prompt_hash, input_tokens, output_tokens, cost_usd, finish_reason, output)
         values ($1, $2, 2, 'analyst', 'draft', 'offline', 'm', repeat('a', 64), 1, 1, 0, 'stop', '{}')`,
        [a.tenantId, running.id],
      ),
    ).toBe('42501');
    expect(await asA(`update agent_calls set input_tokens = 0 where execution_id = $1`, [running.id])).toBe('42501');
  });
});

describe("a request's enqueue_job for agents.generate_spec", () => {
  const enqueue = (tenantId: string, payload: unknown, key: string | null, maxAttempts = 3) =>
    asAppRoleInTenant(database.appUrl, tenantId, `select app_private.enqueue_job('agents.generate_spec', $1::json, $2, $3)`, [JSON.stringify(payload), key, maxAttempts]);

  it('takes only the run of a running execution of its own tenant, under its key, with its two ids as the whole payload', async () => {
    const running = await execution(a, 'running');
    const failed = await execution(a, 'failed');
    const completed = await execution(a, 'completed');
    const ofB = await execution(b, 'running');
    const good = { executionId: running.id, tenantId: a.tenantId };
    expect(await enqueue(a.tenantId, good, `agent-execution:${running.id}`)).toBe(1);
    expect(await enqueue(a.tenantId, { ...good, extra: 'x'.repeat(100) }, `agent-execution:${running.id}`)).toBe('42501');
    expect(await enqueue(a.tenantId, { executionId: { id: running.id }, tenantId: a.tenantId }, `agent-execution:${running.id}`)).not.toBe(1);
    expect(await enqueue(a.tenantId, good, `agent-execution:${failed.id}`)).toBe('42501');
    expect(await enqueue(a.tenantId, good, null)).toBe('42501');
    expect(await enqueue(a.tenantId, { executionId: running.id, tenantId: b.tenantId }, `agent-execution:${running.id}`)).toBe('42501');
    expect(await enqueue(a.tenantId, { executionId: ofB.id, tenantId: a.tenantId }, `agent-execution:${ofB.id}`)).toBe('42501');
    expect(await enqueue(a.tenantId, { executionId: ofB.id, tenantId: b.tenantId }, `agent-execution:${ofB.id}`)).toBe('42501');
    for (const other of [failed, completed]) expect(await enqueue(a.tenantId, { executionId: other.id, tenantId: a.tenantId }, `agent-execution:${other.id}`)).toBe('42501');
  });

  it("gives an agent run, and a compile, the service's 3 attempts, whatever the request asks", async () => {
    const running = await execution(a, 'running');
    const [specification] = await q(`insert into specifications (tenant_id, project_id, version, options, input) values ($1, $2, 1000, '{}', '{}') returning id`, [a.tenantId, a.projectId]);
    await inAppRoleTransaction(database.appUrl, a.tenantId, async (client) => {
      await client.query(`select app_private.enqueue_job('agents.generate_spec', $1::json, $2, 25)`, [JSON.stringify({ executionId: running.id, tenantId: a.tenantId }), `agent-execution:${running.id}`]);
      await client.query(`select app_private.enqueue_job('specifications.compile', $1::json, $2, 1)`, [JSON.stringify({ specificationId: specification.id, tenantId: a.tenantId }), `specification:${specification.id}`]);
    }, { commit: true });
    const attempts = await q(`select key, max_attempts from graphile_worker._private_jobs where key in ($1, $2) order by key`, [`agent-execution:${running.id}`, `specification:${specification.id}`]);
    expect(attempts).toEqual([
      { key: `agent-execution:${running.id}`, max_attempts: 3 },
      { key: `specification:${specification.id}`, max_attempts: 3 },
    ]);
  });

  it('queues nothing a rolled-back request asked for', async () => {
    const running = await execution(a, 'running');
    await inAppRoleTransaction(database.appUrl, a.tenantId, (client) =>
      client.query(`select app_private.enqueue_job('agents.generate_spec', $1::json, $2, 3)`, [JSON.stringify({ executionId: running.id, tenantId: a.tenantId }), `agent-execution:${running.id}`]),
    );
    expect(await q(`select 1 from graphile_worker._private_jobs where key = $1`, [`agent-execution:${running.id}`])).toEqual([]);
  });
});
