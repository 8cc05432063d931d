import pg from 'pg';

/**
 * Runs `text` as the app role (what every request runs as) in a transaction for `tenantId`, rolled
 * back: the number of rows it reached, or the SQLSTATE it failed with. For asserting what row-level
 * security, grants and keys let a request do, without leaving anything behind.
 */
export async function asAppRoleInTenant(appUrl: string, tenantId: string, text: string, values: unknown[] = []): Promise<number | string> {
  return inAppRoleTransaction(appUrl, tenantId, async (client) => (await client.query(text, values)).rowCount ?? 0).catch((error: { code: string }) => error.code);
}

/**
 * `work` on a connection of the app role, in one transaction for `tenantId`, as a request runs:
 * rolled back afterwards unless `commit`, which commits it when `work` succeeds.
 */
export async function inAppRoleTransaction<T>(appUrl: string, tenantId: string, work: (client: pg.Client) => Promise<T>, options: { commit?: boolean } = {}): Promise<T> {
  const client = new pg.Client({ connectionString: appUrl });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`select set_config('app.tenant_id', $1, true)`, [tenantId]);
    const result = await work(client);
    if (options.commit) await client.query('commit');
    return result;
  } finally {
    await client.query('rollback').catch(() => {});
    await client.end();
  }
}
