// Benchmark: checking a parsed request body's shape (control-plane/http/body-shape.ts, run on every
// /api and /trpc body before any handler) against parsing the same body with JSON.parse, in one run.
// The body is the hostile kind: a 1 MiB array of small numbers nested 60 levels deep, which a walk
// that copied its path per value turned into seconds and gigabytes. Target: ≤ 1× the parse, and the
// heap the check leaves behind ≤ 0.1× the parsed body's.
//
//   node --no-node-snapshot --expose-gc bench/body-shape.ts
import { bodyShapeProblem } from '../control-plane/http/body-shape.ts';
import { atMost, interleavedMediansMs, report } from './measure.ts';

let body: unknown = { x: new Array(500_000).fill(0) };
for (let level = 0; level < 60; level += 1) body = { a: body };
const text = JSON.stringify(body);
const parsed = JSON.parse(text);

const gc = (globalThis as { gc?: () => void }).gc;
const heapAfter = (work: () => unknown) => {
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const kept = work();
  const grown = process.memoryUsage().heapUsed - before;
  return { kept, grown };
};
const parseGrowth = heapAfter(() => JSON.parse(text)).grown;
const checkGrowth = heapAfter(() => bodyShapeProblem(parsed)).grown;

const { a: checkMs, b: parseMs } = await interleavedMediansMs(15, () => bodyShapeProblem(parsed), () => JSON.parse(text), 3);
await report(
  'body-shape',
  [atMost('check vs JSON.parse of the same body', checkMs / parseMs, 1), atMost('heap grown by the check vs by the parse', Math.max(0, checkGrowth) / parseGrowth, 0.1)],
  { checkMs, parseMs, bodyBytes: text.length, parseHeapBytes: parseGrowth, checkHeapBytes: checkGrowth, gcExposed: gc !== undefined },
);
