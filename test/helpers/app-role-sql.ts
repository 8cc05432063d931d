import pg from 'pg';

/**
 * Runs `text` as the app role (what every request runs as) in a transaction for `tenantId`, rolled
 * back: the number of rows it reached, or the SQLSTATE it failed with. For asserting what row-level
 * security, grants and keys let a request do, without leaving anything behind.
 */
export async function asAppRoleInTenant(appUrl: string, tenantId: string, text: string, values: unknown[] = []): Promise<number | string> {
  const client = new pg.Client({ connectionString: appUrl });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`select set_config('app.tenant_id', $1, true)`, [tenantId]);
    return (await client.query(text, values)).rowCount ?? 0;
  } catch (error) {
    return (error as { code: string }).code;
  } finally {
    await client.query('rollback').catch(() => {});
    await client.end();
  }
}
