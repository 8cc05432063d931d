/**
 * True when `value` nests objects or arrays more than `limit` levels deep. Checked without
 * recursion, so the check itself cannot overflow however deep the value is: JSON.parse copes with
 * any depth, but JSON.stringify, ajv and other recursive walkers overflow a few thousand levels down.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}
