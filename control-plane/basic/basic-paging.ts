import { z } from 'zod';
import { queryInteger } from '../http/paging.ts';

/** The most items one Variant A page holds. */
export const MAX_PAGE_SIZE = 100;

/**
 * Variant A's list query (seed §4.2): `page` (from 1, default 1), `pageSize` (default 20, at most
 * 100), `sort` (one of the collection's sortable fields, default the first: creation time) and
 * `order` (asc, the default, or desc). Ties are broken by id in the same order, so pages never
 * overlap or skip an item.
 */
export function basicListInput<const Sort extends readonly [string, ...string[]]>(sortFields: Sort) {
  return z.object({
    page: queryInteger(1, 1_000_000_000).default(1),
    pageSize: queryInteger(1, MAX_PAGE_SIZE).default(20),
    sort: z.enum(sortFields).default(sortFields[0] as Sort[0]).describe(`The field to order by: ${sortFields.join(', ')} (default ${sortFields[0]}); ties go by id`),
    order: z.enum(['asc', 'desc']).default('asc'),
  });
}

export type BasicListQuery<Sort extends string = string> = { page: number; pageSize: number; sort: Sort; order: 'asc' | 'desc' };

/** Variant A's list wrapper: items, total, page, pageSize. */
export function basicListOutput<Item extends z.ZodType>(item: Item) {
  return z.object({ items: z.array(item), total: z.number().int(), page: z.number().int(), pageSize: z.number().int() });
}

/** The B-style limit and offset a page stands for. */
export function pagingOf(query: Pick<BasicListQuery, 'page' | 'pageSize'>) {
  return { limit: query.pageSize, offset: (query.page - 1) * query.pageSize };
}
