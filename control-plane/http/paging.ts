import { z } from 'zod';

// Signed, so a negative one is told its range like any other out-of-range number; of any length,
// so one too large to hold exactly is still told the range rather than "not a whole number".
const WHOLE_NUMBER = /^-?\d+$/;

/** Hundreds of digits read as Infinity, which zod calls no number: keep it a (huge) number. */
const finite = (value: number) => (Number.isFinite(value) ? value : Math.sign(value) * Number.MAX_VALUE);

/**
 * A whole number in a query: REST sends it as text, so a string of decimal digits (after an
 * optional "-") is read as its number; anything else must already be a number (`true`, `[3]`,
 * `"0x10"` and `" 12 "` are refused, where z.coerce would read 1, 3, 16 and 12). Typed as a number
 * for TypeScript callers.
 */
export function queryInteger(min: number, max: number) {
  return z.preprocess(
    (value: number) => (typeof value === 'string' && WHOLE_NUMBER.test(value) ? finite(Number(value)) : value),
    z
      .number({ error: 'must be a whole number' })
      // The range first, each check stopping the rest: a number out of range gets that one issue.
      .min(min, { error: `must be at least ${min}`, abort: true })
      .max(max, { error: `must be at most ${max}`, abort: true })
      .int({ error: 'must be a whole number' }),
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
