// Benchmark: counting the tokens of a prompt that holds a long run of characters without a space (a
// 10,000-character answer in Chinese or Japanese, base64), as the service counts it before every
// agent call (control-plane/ai/token-count.ts: the run counted in pieces of 256) against
// gpt-tokenizer counting the same text whole, whose merging grows with the square of the run's
// length. Each count starts from an empty merge cache, as a new answer's would. Target: ≤ 0.25×.
//
//   node --no-node-snapshot bench/token-count.ts
import { clearMergeCache, countTokens as countWhole } from 'gpt-tokenizer';
import { countTokens } from '../control-plane/ai/token-count.ts';
import { atMost, interleavedMediansMs, report } from './measure.ts';

let seed = 7;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const run = Array.from({ length: 10_000 }, () => String.fromCharCode(0x4e00 + Math.floor(random() * 20_000))).join('');
const prompt = `Answers:\n- problem: "${run}"\n- audience: ["consumers"]`;
const noSpecial = { disallowedSpecial: new Set<string>() };
const inPieces = () => (clearMergeCache(), countTokens(prompt));
const whole = () => (clearMergeCache(), countWhole(prompt, noSpecial));
const counted = inPieces();
const exact = whole();
if (counted < exact) throw new Error(`counted ${counted}, under the exact ${exact}`);

const { a: piecesMs, b: wholeMs } = await interleavedMediansMs(7, inPieces, whole, 2);
await report('token-count', [atMost('a 10,000-character run counted in pieces vs whole', piecesMs / wholeMs, 0.25)], {
  runCharacters: run.length,
  tokensCounted: counted,
  tokensExact: exact,
  piecesMs,
  wholeMs,
});
