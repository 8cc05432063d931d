import type { z } from 'zod';

/**
 * How many characters PostgreSQL writes a number in when it reads jsonb back: jsonb keeps numbers
 * as `numeric`, which has no exponent form, so `1e308` comes back as 309 digits and `5e-324` as 326
 * characters. JavaScript writes a number with an exponent only outside 1e-7..1e21; inside, the two agree.
 */
function storedNumberLength(value: number): number {
  const text = String(value);
  const exponentForm = /^(-?)\d(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exponentForm) return text.length;
  const [, sign = '', fraction = '', exponent = '0'] = exponentForm;
  const digits = 1 + fraction.length;
  const beforePoint = 1 + Number(exponent);
  // 1.5e+300: the digits, then zeros up to the point; 1.5e-7: "0.", zeros, then the digits.
  return sign.length + (beforePoint >= digits ? beforePoint : 2 - beforePoint + digits);
}

/** The spaces jsonb's text form adds to a container: one after each `:` and each `,`. */
function separatorSpaces(item: object): number {
  const entries = Array.isArray(item) ? item.length : Object.keys(item).length;
  const colons = Array.isArray(item) ? 0 : entries;
  return colons + Math.max(0, entries - 1);
}

/**
 * A value's size as JSON once stored in jsonb and read back (what the worker loads and a list page
 * carries). Measured as JavaScript writes it, a request of `1e308`s would be counted at 6 bytes a
 * number and stored at 310 (1 MiB of them is 50 MB in the table), and `[0,0,…]` at two thirds of
 * what PostgreSQL gives back, `[0, 0, …]`.
 */
function storedJsonBytes(value: unknown): number {
  let grownBy = 0;
  const json = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'number') grownBy += storedNumberLength(item) - String(item).length;
    else if (typeof item === 'object' && item !== null) grownBy += separatorSpaces(item);
    return item;
  });
  return Buffer.byteLength(json) + grownBy;
}

/** `schema`, refusing a value whose stored JSON (`storedJsonBytes`) is over `maxBytes`, on its own field. */
export function storedJsonAtMost<Schema extends z.ZodType>(schema: Schema, maxBytes: number): Schema {
  return schema.refine((value) => storedJsonBytes(value) <= maxBytes, { error: `must be at most ${maxBytes} bytes as JSON` });
}
