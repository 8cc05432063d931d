import pg from 'pg';

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
