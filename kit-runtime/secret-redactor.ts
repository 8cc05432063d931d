/**
 * Opened credentials enter a run only for APPLY, but a hook can still echo them into a log line or
 * an error message. Every text the run reports passes through `redact`, which blanks any secret
 * value the run has seen.
 */

const MIN_SECRET_LENGTH = 4;
const REDACTED = '[redacted]';

export type SecretRedactor = {
  remember(secret: unknown): void;
  redact(text: string): string;
};

export function createSecretRedactor(): SecretRedactor {
  const secrets = new Set<string>();
  const remember = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.length >= MIN_SECRET_LENGTH) secrets.add(value);
    } else if (typeof value === 'number' && String(value).length >= MIN_SECRET_LENGTH) {
      secrets.add(String(value));
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
