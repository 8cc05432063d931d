import { ownerQuery } from './owner-sql.ts';

/** The tables that hold tenants' data. */
export const tenantTables = [
  'tenants', 'users', 'organizations', 'organization_members', 'api_keys', 'projects', 'customer_invitations', 'agency_project_assignments',
  'kits', 'kit_versions', 'kit_executions', 'kit_outputs', 'kit_credentials', 'blobs', 'flow_questions', 'flow_answers', 'specifications',
  'agent_executions', 'agent_calls', 'tasks', 'task_dependencies', 'task_submissions', 'user_stories',
];

/** A digest of every row of every tenant table: equal before and after means nothing was written. */
export async function tableSnapshot(ownerUrl: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const table of tenantTables) {
    // last_used_at moves whenever a key is used; it is bookkeeping, not the data under test.
    const [row] = await ownerQuery(ownerUrl, `select coalesce(md5(string_agg((to_jsonb(t) - 'last_used_at')::text, '|' order by t::text)), '') as digest from ${table} t`);
    result[table] = row.digest;
  }
  return result;
}
