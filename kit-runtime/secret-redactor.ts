/**
 * Opened credentials enter a run only for APPLY, but a hook can still echo them into a log line or
 * an error message. Every text the run reports passes through `redact` before anything else touches
 * it (cleaning collapses line breaks and truncates, which would hide a secret from an exact match),
 * and blanks any secret value the run has seen. Each secret is also remembered as the message
 * cleaner would render it and line by line, so a multi-line key (PEM) echoed one line at a time, or
 * text cleaned before it was redacted, is still caught. And each of those forms is remembered
 * JSON-escaped, once and twice: `kit.log` and `console.*` stringify the objects they are given, so
 * `console.log(context.credentials)` reports `pa\"ss` for `pa"ss`, and a logged request whose body
 * is already a JSON string escapes the secret a second time.
 */
import { normaliseGuestText } from './errors.ts';

const MIN_SECRET_LENGTH = 4;
const REDACTED = '[redacted]';

export type SecretRedactor = {
  remember(secret: unknown): void;
  redact(text: string): string;
  /** A JSON value with every string in it, keys included, redacted. */
  redactJson(value: unknown): unknown;
};

export function createSecretRedactor(): SecretRedactor {
  const secrets = new Set<string>();
  // Longest first, so a secret that contains another is blanked whole; sorted again only after a
  // new secret, not for every line redacted.
  let longestFirst: string[] = [];
  const add = (text: string) => {
    if (text.length < MIN_SECRET_LENGTH || secrets.has(text)) return;
    secrets.add(text);
    longestFirst = [...secrets].sort((a, b) => b.length - a.length);
  };
  const remember = (value: unknown): void => {
    if (typeof value === 'string') {
      const lines = value.split(/\r\n|\r|\n/).map((line) => line.trim());
      for (const form of [value, normaliseGuestText(value), ...lines]) {
        const escaped = jsonEscaped(form);
        add(form);
        add(escaped);
        add(jsonEscaped(escaped));
      }
    } else if (typeof value === 'number') {
      add(String(value));
    } else if (value !== null && typeof value === 'object') {
      for (const inner of Object.values(value)) remember(inner);
    }
  };
  const redact = (text: string): string => {
    let out = text;
    for (const secret of longestFirst) out = out.split(secret).join(REDACTED);
    return out;
  };
  const redactJson = (value: unknown): unknown => {
    if (typeof value === 'string') return redact(value);
    // A numeric secret (a PIN) handed back as a number is blanked whole, as its text would be.
    if (typeof value === 'number' && secrets.has(String(value))) return REDACTED;
    if (Array.isArray(value)) return value.map(redactJson);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [redact(key), redactJson(inner)]));
    return value;
  };
  return { remember, redact, redactJson };
}

/** The text as it appears inside a JSON string literal (quotes, backslashes, control characters escaped). */
function jsonEscaped(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}
