import { z } from 'zod';

/** Variant B paging: `limit` (default 50, max 200) and `offset`; lists report `total`. */
// Coerced, because REST sends them as query strings; typed as numbers for TypeScript callers.
export const pagingInput = z.object({
  limit: z.coerce.number<number>().int().min(1).max(200).default(50),
  offset: z.coerce.number<number>().int().min(0).default(0),
});

export type Paging = z.infer<typeof pagingInput>;

export function pagedOutput<Key extends string, Item extends z.ZodType>(key: Key, item: Item) {
  return z.object({ [key]: z.array(item), total: z.number().int(), limit: z.number().int(), offset: z.number().int() } as {
    [K in Key]: z.ZodArray<Item>;
  } & { total: z.ZodNumber; limit: z.ZodNumber; offset: z.ZodNumber });
}
