import { countTokens as countWhole } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { countTokens } from './token-count.ts';

const whole = (text: string) => countWhole(text, { disallowedSpecial: new Set() });

describe('countTokens', () => {
  it('counts ordinary text exactly as gpt-tokenizer does, control tokens as text', () => {
    for (const text of ['Small clinics lose bookings after hours.', 'a b '.repeat(500), `Answers:\n- problem: "<|endoftext|> ${'word '.repeat(300)}"`, '']) {
      expect(countTokens(text)).toBe(whole(text));
    }
  });

  it('counts a run of over 256 characters without a space in pieces of 256, never under the whole count', () => {
    const run = Array.from({ length: 2_000 }, (_, index) => String.fromCharCode(0x4e00 + ((index * 7_919) % 20_000))).join('');
    const text = `before ${run} after`;
    // Cut inside the run only, every 256 of its characters: "before " stays with the first piece, " after" with the last.
    const cuts = [7 + 256, 7 + 512, 7 + 768, 7 + 1024, 7 + 1280, 7 + 1536, 7 + 1792];
    const pieces = [0, ...cuts].map((start, index) => text.slice(start, cuts[index] ?? text.length));
    expect(pieces.join('')).toBe(text);
    expect(countTokens(text)).toBe(pieces.reduce((sum, piece) => sum + whole(piece), 0));
    expect(countTokens(text)).toBeGreaterThanOrEqual(whole(text));
  });
});
