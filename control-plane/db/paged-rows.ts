import { sql, type SelectQueryBuilder } from 'kysely';
import type { Paging } from '../http/paging.ts';

/**
 * One page of a list, how many rows the whole list holds, and which page it is (`limit`, `offset`:
 * what a paged answer echoes). `listed` selects and orders the rows, `counted` is the same query
 * with its filters and nothing selected. Both run in the caller's transaction (a read-only request
 * reads one snapshot), so the page and its `total` agree.
 */
export async function pagedRows<DB, TB extends keyof DB, Row>(
  listed: SelectQueryBuilder<DB, TB, Row>,
  counted: SelectQueryBuilder<DB, TB, object>,
  paging: Paging,
): Promise<{ rows: Row[]; total: number; limit: number; offset: number }> {
  const [rows, count] = await Promise.all([
    listed.limit(paging.limit).offset(paging.offset).execute(),
    counted.select(sql<string>`count(*)`.as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows as Row[], total: Number((count as { total: string }).total), limit: paging.limit, offset: paging.offset };
}
