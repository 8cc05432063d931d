/**
 * Whether a text people read in a list (a name, a title) shows anything: it holds a letter, digit,
 * punctuation mark or symbol — not only spaces of any kind, control or format characters, combining
 * marks on their own, Unicode's default-ignorable characters (zero-width, bidirectional controls,
 * the Hangul filler …) or the braille blank, U+2800. "   " or "\u200b\u200d" would list as a blank row.
 */
const VISIBLE_CHARACTER = /(?![\p{Default_Ignorable_Code_Point}\u2800])[\p{L}\p{N}\p{P}\p{S}]/u;

export function hasVisibleCharacter(text: string): boolean {
  return VISIBLE_CHARACTER.test(text);
}

export const NO_VISIBLE_CHARACTER = 'must contain a visible character, not only spaces, zero-width characters or bidirectional controls';
