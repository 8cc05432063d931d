import { z } from 'zod';

// Signed, so a negative one is told its range like any other out-of-range number.
const WHOLE_NUMBER = /^-?\d{1,16}$/;

/**
 * A whole number in a query: REST sends it as text, so a string of decimal digits (after an
 * optional "-") is read as its number; anything else must already be a number (`true`, `[3]`,
 * `"0x10"` and `" 12 "` are refused, where z.coerce would read 1, 3, 16 and 12). Typed as a number
 * for TypeScript callers.
 */
export function queryInteger(min: number, max: number) {
  return z.preprocess(
    (value: number) => (typeof value === 'string' && WHOLE_NUMBER.test(value) ? Number(value) : value),
    z
      .number({ error: 'must be a whole number' })
      .int({ error: 'must be a whole number' })
      .min(min, { error: `must be at least ${min}` })
      .max(max, { error: `must be at most ${max}` }),
  );
}

/** Variant B paging: `limit` (default 50, max 200) and `offset`; lists report `total`. */
export const pagingInput = z.object({
  limit: queryInteger(1, 200).default(50),
  offset: queryInteger(0, Number.MAX_SAFE_INTEGER).default(0),
});

export type Paging = z.infer<typeof pagingInput>;

export function pagedOutput<Key extends string, Item extends z.ZodType>(key: Key, item: Item) {
  return z.object({ [key]: z.array(item), total: z.number().int(), limit: z.number().int(), offset: z.number().int() } as {
    [K in Key]: z.ZodArray<Item>;
  } & { total: z.ZodNumber; limit: z.ZodNumber; offset: z.ZodNumber });
}
