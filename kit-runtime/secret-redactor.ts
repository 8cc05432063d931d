/**
 * Opened credentials enter a run only for APPLY, but a hook can still echo them into a log line or
 * an error message. Every text the run reports passes through `redact` before anything else touches
 * it (cleaning collapses line breaks and truncates, which would hide a secret from an exact match),
 * and again once cleaned (dropping control characters can rejoin a secret a kit split with one),
 * and blanks any secret value the run has seen. Each secret is also remembered as the message
 * cleaner would render it and line by line, so a multi-line key (PEM) echoed one line at a time, or
 * text cleaned before it was redacted, is still caught. And each of those forms is remembered in
 * the encodings a secret travels in:
 * - JSON-escaped, once and twice: `kit.log` and `console.*` stringify the objects they are given,
 *   so `console.log(context.credentials)` reports `pa\"ss` for `pa"ss`, and a logged request whose
 *   body is already a JSON string escapes the secret a second time;
 * - percent-encoded (`encodeURIComponent`, and form encoding with `+` for spaces), with upper- and
 *   lower-case hex digits: a token in a logged URL;
 * - base64 and base64url, whole and — for a secret encoded after other bytes, as in a Basic
 *   header's `user:token` — at each of the three byte offsets, the run of characters that depends
 *   on the secret alone;
 * - in any letter case (`toUpperCase()`), for values of 8 characters or more.
 * Values under 4 characters are never redacted: blanking "907" everywhere would mangle unrelated
 * numbers and words. Matches may overlap (two secrets side by side, one secret inside another's
 * encoding): every character any of them covers is blanked.
 */
import { normaliseGuestText } from './errors.ts';

const MIN_SECRET_LENGTH = 4;
/** Below this a case-insensitive match blanks ordinary words ("Main" for "main"); shorter values match only in their own case. */
const MIN_ANY_CASE_LENGTH = 8;
/**
 * A base64 run cut out of a longer encoding counts from 8 characters (6 bytes of the secret): any
 * 4 characters turn up by chance about once in 16 MB of unrelated base64, 8 practically never.
 */
const MIN_BASE64_RUN = 8;
const REDACTED = '[redacted]';

export type SecretRedactor = {
  remember(secret: unknown): void;
  redact(text: string): string;
  /** A JSON value with every string in it, keys included, redacted. */
  redactJson(value: unknown): unknown;
};

export function createSecretRedactor(): SecretRedactor {
  /** The values themselves (whole, cleaned and line by line), for numbers handed back whole. */
  const values = new Set<string>();
  const encodedValues = new Set<string>();
  const exactForms = new Set<string>();
  const anyCaseForms = new Set<string>();
  // Compiled again only after a new secret, not for every line redacted.
  let matchers: RegExp[] | null = [];

  const rememberForms = (value: string, encoded: boolean) => {
    if (value.length < MIN_SECRET_LENGTH || (encoded ? encodedValues : values).has(value)) return;
    matchers = null;
    const caseForms = value.length >= MIN_ANY_CASE_LENGTH ? anyCaseForms : exactForms;
    if (!values.has(value)) {
      values.add(value);
      const escaped = jsonEscaped(value);
      for (const form of [value, escaped, jsonEscaped(escaped)]) caseForms.add(form);
    }
    if (!encoded) return;
    encodedValues.add(value);
    // Both cases of hex digits are listed, for values matched in their own case only.
    for (const form of percentEncoded(value)) caseForms.add(form);
    for (const form of base64Forms(value)) exactForms.add(form);
  };
  const rememberText = (text: string) => {
    // Encodings are of the value as a whole; lines of a multi-line value are echoed as they are.
    rememberForms(text, true);
    rememberForms(normaliseGuestText(text), true);
    for (const line of text.split(/\r\n|\r|\n/)) rememberForms(line.trim(), false);
  };
  const remember = (value: unknown): void => {
    if (typeof value === 'string') rememberText(value);
    else if (typeof value === 'number') rememberText(String(value));
    else if (value !== null && typeof value === 'object') for (const inner of Object.values(value)) remember(inner);
  };

  const redact = (text: string): string => {
    matchers ??= [alternation(exactForms, 'g'), alternation(anyCaseForms, 'gi')].filter((matcher) => matcher !== null);
    // Every range any form covers, then merged: a global match would skip a form that starts
    // inside another's match and runs past it.
    const ranges: Array<[number, number]> = [];
    for (const matcher of matchers) {
      matcher.lastIndex = 0;
      for (let match = matcher.exec(text); match !== null; match = matcher.exec(text)) {
        // The alternation lists longest first, so this is the longest form starting here.
        ranges.push([match.index, match.index + match[0].length]);
        matcher.lastIndex = match.index + 1;
      }
    }
    if (ranges.length === 0) return text;
    ranges.sort((a, b) => a[0] - b[0]);
    let out = '';
    let copiedUpTo = 0;
    let [start, end] = ranges[0]!;
    for (const [nextStart, nextEnd] of ranges) {
      if (nextStart <= end) {
        end = Math.max(end, nextEnd);
        continue;
      }
      out += text.slice(copiedUpTo, start) + REDACTED;
      copiedUpTo = end;
      [start, end] = [nextStart, nextEnd];
    }
    return out + text.slice(copiedUpTo, start) + REDACTED + text.slice(end);
  };
  const redactJson = (value: unknown): unknown => {
    if (typeof value === 'string') return redact(value);
    // A numeric secret (a PIN) handed back as a number is blanked whole, as its text would be.
    if (typeof value === 'number' && values.has(String(value))) return REDACTED;
    if (Array.isArray(value)) return value.map(redactJson);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [redact(key), redactJson(inner)]));
    return value;
  };
  return { remember, redact, redactJson };
}

/** One expression matching any of the forms, longest first, so each match is the longest form starting there. */
function alternation(forms: ReadonlySet<string>, flags: string): RegExp | null {
  if (forms.size === 0) return null;
  const longestFirst = [...forms].sort((a, b) => b.length - a.length);
  return new RegExp(longestFirst.map((form) => form.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')).join('|'), flags);
}

/** The text as it appears inside a JSON string literal (quotes, backslashes, control characters escaped). */
function jsonEscaped(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** `encodeURIComponent` and form encoding (`URLSearchParams`), each with upper- and lower-case hex digits. */
function percentEncoded(text: string): string[] {
  let component: string;
  try {
    component = encodeURIComponent(text);
  } catch {
    return []; // an unpaired surrogate cannot be percent-encoded
  }
  const form = new URLSearchParams({ v: text }).toString().slice(2);
  const lowerHex = (encoded: string) => encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
  return [component, lowerHex(component), form, lowerHex(form)].filter((encoded) => encoded !== text);
}

/**
 * Base64 and base64url of the UTF-8 bytes: the whole encoding, and for each offset (0, 1 or 2 bytes
 * before the secret) the characters that depend on the secret's bytes alone — every 3-byte group
 * that lies inside it. What other bytes share a group with the secret's first or last bytes is
 * left (at most 2 bytes of the secret at each end, in characters mixed with their neighbours').
 */
function base64Forms(text: string): string[] {
  const bytes = Buffer.from(text, 'utf8');
  const forms = new Set<string>();
  for (const encoding of ['base64', 'base64url'] as const) {
    forms.add(bytes.toString(encoding));
    for (let offset = 0; offset < 3; offset += 1) {
      const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString(encoding);
      const fullGroups = Math.floor((offset + bytes.length) / 3);
      const run = encoded.slice(offset === 0 ? 0 : 4, fullGroups * 4);
      if (run.length >= MIN_BASE64_RUN) forms.add(run);
    }
  }
  return [...forms];
}
