import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createUserInTenant } from '../helpers/tenant-fixtures.ts';

/**
 * DELETE /api/projects/{id} removes "the project and everything that belongs to it in one
 * transaction" and names the tables it removed rows from. What belongs to a project is read from the
 * catalog: every table with a foreign key to projects, every table whose rows cascade from those,
 * and every table those rows point at that the delete removes with them (a bundle's blob). A table
 * added tomorrow with a key to projects fails here until this test can fill it and the delete
 * reports it; otherwise the cascade would remove its rows unreported (or keep them, with SET NULL).
 */
let app: TestApp;
const sql = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

/** Tables whose rows reach a project through foreign keys that cascade (the project's own first). */
async function tablesBelongingToProjects(): Promise<string[]> {
  const rows = await sql(`
    with recursive belonging(table_oid) as (
      select 'projects'::regclass::oid
      union
      select c.conrelid from pg_constraint c join belonging b on c.confrelid = b.table_oid
       where c.contype = 'f' and c.conrelid <> b.table_oid and (b.table_oid = 'projects'::regclass or c.confdeltype = 'c')
    )
    select table_oid::regclass::text as name from belonging order by 1`);
  return rows.map((row) => row.name as string);
}

/** One row in each table that belongs to `projectId` (and the blob its execution's bundle holds). */
const fill: Record<string, (ids: { tenantId: string; organizationId: string; projectId: string; customerId: string }, kit: { id: string; versionId: string }) => Promise<void>> = {
  projects: async () => {},
  agency_project_assignments: async ({ tenantId, organizationId, projectId, customerId }) => {
    await sql('insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)', [tenantId, organizationId, projectId, customerId]);
  },
  kit_credentials: async ({ tenantId, organizationId, projectId }) => {
    await sql(`insert into kit_credentials (tenant_id, organization_id, project_id, kit_id, credential_type, key_id, sealed) values ($1, $2, $3, 'k', 'token', 'k1', 's')`, [tenantId, organizationId, projectId]);
  },
  kit_executions: async ({ tenantId, organizationId, projectId }, kit) => {
    const [blob] = await sql(`insert into blobs (tenant_id, content_type, size_bytes, sha256, content) values ($1, 'application/zip', 1, 'x', '\\x00') returning id`, [tenantId]);
    await sql(
      `insert into kit_executions (tenant_id, organization_id, project_id, kit_row_id, kit_version_id, status, input, bundle_blob_id) values ($1, $2, $3, $4, $5, 'completed', '{}', $6)`,
      [tenantId, organizationId, projectId, kit.id, kit.versionId, blob.id],
    );
  },
  kit_outputs: async ({ tenantId, projectId }) => {
    await sql(
      `insert into kit_outputs (tenant_id, execution_id, output_id, filename, output_type, content_type, content, status, content_size_bytes)
       select $1, id, 'readme', 'README.md', 'markdown', 'text/markdown', 'x', 'valid', 1 from kit_executions where project_id = $2`,
      [tenantId, projectId],
    );
  },
  flow_questions: async ({ tenantId, projectId }) => {
    await sql(
      `insert into flow_questions (tenant_id, project_id, phase, key, position, text, description, variants, answer_type, required, weight)
       values ($1, $2, 'DISCOVERY', 'problem', 0, 'What?', 'Why', '[]', 'text', true, 1)`,
      [tenantId, projectId],
    );
  },
  specifications: async ({ tenantId, projectId }) => {
    await sql(`insert into specifications (tenant_id, project_id, version, options, input) values ($1, $2, 1, '{}', '{}')`, [tenantId, projectId]);
  },
  agent_executions: async ({ tenantId, projectId }) => {
    await sql(`insert into agent_executions (tenant_id, project_id, strategy, agents, options, input, token_limit, cost_limit_usd, total_steps) values ($1, $2, 'sequential', '{analyst}', '{}', '{}', 10, 1, 1)`, [tenantId, projectId]);
  },
  agent_calls: async ({ tenantId, projectId }) => {
    await sql(
      `insert into agent_calls (tenant_id, execution_id, step, agent, task, provider, model, prompt_hash, input_tokens, output_tokens, cost_usd, finish_reason, output)
       select $1, id, 1, 'analyst', 'draft', 'offline', 'm', repeat('a', 64), 1, 1, 0, 'stop', '{}' from agent_executions where project_id = $2`,
      [tenantId, projectId],
    );
  },
  tasks: async ({ tenantId, projectId }) => {
    for (const title of ['first', 'second']) {
      await sql(`insert into tasks (tenant_id, project_id, type, title, description, status, priority, actions, targets) values ($1, $2, 'DECIDE', $3, 'd', 'pending', 'low', '[]', '[]')`, [tenantId, projectId, title]);
    }
  },
  task_dependencies: async ({ tenantId, projectId }) => {
    await sql(
      `insert into task_dependencies (tenant_id, task_id, depends_on)
       select $1, (select id from tasks where project_id = $2 and title = 'second'), (select id from tasks where project_id = $2 and title = 'first')`,
      [tenantId, projectId],
    );
  },
  task_submissions: async ({ tenantId, projectId }) => {
    await sql(
      `insert into task_submissions (tenant_id, task_id, action_id, idempotency_key, request_hash, response) select $1, id, 'a1', 'k-' || id, repeat('a', 64), '{}' from tasks where project_id = $2`,
      [tenantId, projectId],
    );
  },
  user_stories: async ({ tenantId, projectId }) => {
    await sql(`insert into user_stories (tenant_id, project_id, title, acceptance_criteria) values ($1, $2, 'Book a slot', '["A slot is held"]')`, [tenantId, projectId]);
  },
  flow_answers: async ({ tenantId, projectId }) => {
    await sql(`insert into flow_answers (tenant_id, project_id, question_id, value) select $1, $2, id, '"x"' from flow_questions where project_id = $2`, [tenantId, projectId]);
  },
};

describe('deleting a project', () => {
  it('reaches every table that references a project, and reports each', async () => {
    const belonging = await tablesBelongingToProjects();
    expect(belonging.filter((table) => !(table in fill)), 'tables that reference projects which this test cannot fill: teach it, and the delete').toEqual([]);
    expect(belonging).toEqual(expect.arrayContaining(['projects', 'agency_project_assignments', 'kit_credentials', 'kit_executions', 'kit_outputs']));

    const { tenantId, organizationId, apiKey } = app.bootstrap;
    const customer = await createUserInTenant(app, sql, tenantId, 'Cleo');
    await sql(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [tenantId, organizationId, customer.userId]);
    const [kit] = await sql('select id, latest_version_id as "versionId" from kits where organization_id is null and latest_version_id is not null order by kit_id limit 1');
    const created = await call(app.url, '/api/projects', { apiKey, body: { name: 'Everything', organizationId } });
    expect(created.status, created.text).toBe(201);
    const projectId = created.body.data.id as string;
    // In the order the catalog gives, a parent before what cascades from it.
    for (const table of new Set(['projects', 'agency_project_assignments', 'kit_credentials', 'kit_executions', 'kit_outputs', 'flow_questions', 'flow_answers', 'agent_executions', 'agent_calls', 'tasks', 'task_dependencies', 'task_submissions', ...belonging])) {
      await fill[table]?.({ tenantId, organizationId, projectId, customerId: customer.userId }, kit);
    }
    const blobs = (await sql('select bundle_blob_id from kit_executions where project_id = $1', [projectId])).map((row) => row.bundle_blob_id);

    const response = await call(app.url, `/api/projects/${projectId}`, { method: 'DELETE', apiKey });
    expect(response.status, response.text).toBe(200);
    // The delete also removes the bundles its executions held: blobs point nowhere, so no key leads to them.
    expect([...response.body.data.deletedTables].sort()).toEqual([...belonging, 'blobs'].sort());

    for (const table of belonging) {
      const columns = await sql(
        `select a.attname from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any(c.conkey)
          where c.contype = 'f' and c.conrelid = $1::regclass and c.confrelid = 'projects'::regclass`,
        [table],
      );
      for (const { attname } of columns) expect(await sql(`select 1 from ${table} where ${attname} = $1`, [projectId]), `${table}.${attname}`).toEqual([]);
    }
    expect(await sql('select id from blobs where id = any($1)', [blobs])).toEqual([]);
  });
});
