import { countTokens as countO200k } from 'gpt-tokenizer';

/** Nothing in a prompt is a control token: `<|endoftext|>` in an answer is text, counted as text. */
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/**
 * The longest run of non-space characters counted in one piece. gpt-tokenizer's merging takes time
 * growing with the square of a run's length (20,000 CJK characters without a space: about a second,
 * on the thread that serves requests or runs jobs); in pieces of this length it is linear. A run
 * this long merges across the cut at most rarely, so a count may be a token over, never under.
 */
const MAX_RUN = 256;

/** `text` cut inside its non-space runs longer than MAX_RUN, and nowhere else. */
function pieces(text: string): string[] {
  const cuts: number[] = [];
  for (const run of text.matchAll(/\S{257,}/g)) {
    for (let at = run.index + MAX_RUN; at < run.index + run[0].length; at += MAX_RUN) cuts.push(at);
  }
  if (cuts.length === 0) return [text];
  return [0, ...cuts].map((start, index) => text.slice(start, cuts[index] ?? text.length));
}

/**
 * How many tokens `text` is in the o200k_base encoding (GPT-4o's and later OpenAI models'), by
 * gpt-tokenizer. Exact for those models but for runs of over 256 characters without a space (see
 * MAX_RUN); for another provider's model an estimate (its usage, as the provider reports it, is what
 * a call records).
 */
export function countTokens(text: string): number {
  return pieces(text).reduce((sum, piece) => sum + countO200k(piece, NO_SPECIAL_TOKENS), 0);
}
