import { countTokens as countO200k } from 'gpt-tokenizer';

/** Nothing in a prompt is a control token: `<|endoftext|>` in an answer is text, counted as text. */
const NO_SPECIAL_TOKENS = { disallowedSpecial: new Set<string>() };

/**
 * How many tokens `text` is in the o200k_base encoding (GPT-4o's and later OpenAI models'), by
 * gpt-tokenizer. Exact for those models; for another provider's model an estimate (its usage, as
 * the provider reports it, is what a call records).
 */
export function countTokens(text: string): number {
  return countO200k(text, NO_SPECIAL_TOKENS);
}
