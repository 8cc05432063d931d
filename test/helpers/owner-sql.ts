import type { Kysely } from 'kysely';
import pg from 'pg';
import { createDatabase } from '../../control-plane/db/kysely-client.ts';

/** Runs SQL as the database owner: for asserting on rows, and for setting up what no API exposes. */
export async function ownerQuery<T extends pg.QueryResultRow = any>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * How many rows `select count(*) from ${from}` finds, as the owner (who sees every tenant's rows).
 * `from` is a table, optionally with joins and a where clause: `countRows(url, 'projects')`,
 * `countRows(url, 'api_keys where user_id = $1', [userId])`.
 */
export async function countRows(url: string, from: string, values: unknown[] = []): Promise<number> {
  const rows = await ownerQuery<{ count: string }>(url, `select count(*) from ${from}`, values);
  return Number(rows[0]!.count);
}

/** Runs `work` with a Kysely connection as the database owner (a migration's `up`, the migrator), then closes it. */
export async function withOwnerKysely<T>(url: string, work: (owner: Kysely<any>) => Promise<T>): Promise<T> {
  const { db } = createDatabase(url, { max: 1 });
  try {
    return await work(db);
  } finally {
    await db.destroy();
  }
}

/** A tenant with one user, made as the owner (what the first run or tenant creation would make): their ids. */
export async function insertTenantWithUser(url: string, email = 'u@example.test'): Promise<{ tenantId: string; userId: string }> {
  const [tenant] = await ownerQuery(url, `insert into tenants (name) values ('t') returning id`);
  const [user] = await ownerQuery(url, `insert into users (tenant_id, email, name) values ($1, $2, 'u') returning id`, [tenant.id, email]);
  return { tenantId: tenant.id, userId: user.id };
}
