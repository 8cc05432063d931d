import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';

/**
 * `uniqueItems` in time linear in the array. ajv's own compares every pair of items whose type it
 * cannot narrow from the schema: an output of 60,000 small arrays took 16 s to check, on the host
 * and outside any time limit. Here each item is keyed by a canonical JSON text and looked up in a
 * map. JSON Schema's equality is JSON's: numbers by value, arrays item by item, objects by their
 * members whatever their order — which is exactly equality of the canonical texts.
 */
export function useLinearUniqueItems(ajv: Ajv2020): void {
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({
    keyword: 'uniqueItems',
    type: 'array',
    schemaType: 'boolean',
    errors: true,
    validate: function uniqueItems(unique: boolean, items: unknown[]): boolean {
      if (!unique) return true;
      const seen = new Map<string, number>();
      for (let index = 0; index < items.length; index++) {
        const key = canonicalJson(items[index]);
        const earlier = seen.get(key);
        if (earlier !== undefined) {
          const error: Partial<ErrorObject> = {
            keyword: 'uniqueItems',
            message: `must NOT have duplicate items (items ## ${index} and ${earlier} are identical)`,
            params: { i: index, j: earlier },
          };
          (uniqueItems as { errors?: Array<Partial<ErrorObject>> }).errors = [error];
          return false;
        }
        seen.set(key, index);
      }
      return true;
    },
  });
}

/**
 * JSON text with object members sorted by name (one fixed order); `-0` reads as `0`, as in JSON.
 * A YAML output may hold numbers JSON has no text for (`.inf`, `.nan`): each gets its own key
 * instead of JSON.stringify's `null`, so `[.inf, null]` has no duplicates.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return `#${String(value)}`;
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const names = Object.keys(record).sort();
    return `{${names.map((name) => `${JSON.stringify(name)}:${canonicalJson(record[name])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
