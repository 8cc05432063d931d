import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Lists are ordered by createdAt, then id, and answers show createdAt to the millisecond. Rows made
 * in the same millisecond must therefore list by id: the order a client sees must follow from
 * what the client is shown.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
});
afterAll(() => app?.stop());

describe('list order', () => {
  it('projects made at the same moment list in (createdAt, id) order, as the answers show them', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `Same moment ${i}`);
    await Promise.all(names.map((name) => call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, body: { name } })));
    const listed = (await call(app.url, '/api/projects?limit=200', { apiKey: app.bootstrap.apiKey })).body.data.projects as Array<{ id: string; createdAt: string }>;
    expect(listed).toHaveLength(40);
    const byWhatIsShown = [...listed].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    expect(listed.map((p) => p.id)).toEqual(byWhatIsShown.map((p) => p.id));
  });

  it('every ordering column holds whole milliseconds, as answers show it', async () => {
    await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, body: { name: 'One more' } });
    await call(app.url, '/api/developer/api-keys', { apiKey: app.bootstrap.apiKey, body: { name: 'one more' } });
    // Lists order by created_at (members by joined_at), shown beside updated_at: every such column, so a new table is held to it too.
    const columns = await ownerQuery<{ table_name: string; column_name: string; column_default: string }>(
      app.database.ownerUrl,
      `select table_name, column_name, column_default from information_schema.columns where table_schema = 'public' and column_name in ('created_at', 'joined_at', 'updated_at')`,
    );
    expect(columns.length).toBeGreaterThanOrEqual(18);
    const finer: string[] = [];
    for (const { table_name: table, column_name: column, column_default: fallback } of columns) {
      const [row] = await ownerQuery(app.database.ownerUrl, `select count(*)::int as finer from ${table} where ${column} <> date_trunc('milliseconds', ${column})`);
      if (row.finer > 0 || !fallback.includes('date_trunc')) finer.push(`${table}.${column}: ${row.finer} rows, default ${fallback}`);
    }
    expect(finer).toEqual([]);
  });
});
