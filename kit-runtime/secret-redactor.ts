/**
 * Opened credentials enter a run only for APPLY, but a hook can still echo them into a log line or
 * an error message. Every text the run reports passes through `redact` before anything else touches
 * it (cleaning collapses line breaks and truncates, which would hide a secret from an exact match),
 * and blanks any secret value the run has seen. Each secret is also remembered as the message
 * cleaner would render it and line by line, so a multi-line key (PEM) echoed one line at a time, or
 * text cleaned before it was redacted, is still caught.
 */
import { normaliseGuestText } from './errors.ts';

const MIN_SECRET_LENGTH = 4;
const REDACTED = '[redacted]';

export type SecretRedactor = {
  remember(secret: unknown): void;
  redact(text: string): string;
};

export function createSecretRedactor(): SecretRedactor {
  const secrets = new Set<string>();
  const add = (text: string) => {
    if (text.length >= MIN_SECRET_LENGTH) secrets.add(text);
  };
  const remember = (value: unknown): void => {
    if (typeof value === 'string') {
      add(value);
      add(normaliseGuestText(value));
      for (const line of value.split(/\r\n|\r|\n/)) add(line.trim());
    } else if (typeof value === 'number') {
      add(String(value));
    } else if (value !== null && typeof value === 'object') {
      for (const inner of Object.values(value)) remember(inner);
    }
  };
  const redact = (text: string): string => {
    let out = text;
    // Longest first, so a secret that contains another is blanked whole.
    for (const secret of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(secret).join(REDACTED);
    return out;
  };
  return { remember, redact };
}
