/**
 * Errors the runtime reports about a kit. Guest failures are re-created here from a message string
 * alone, so nothing from inside the isolate (stack, object, getter) ever reaches host code.
 */

export type KitLimitKind = 'time' | 'memory' | 'output-size' | 'template-depth' | 'host-calls';

/** A run broke one of its limits; the run fails, the runtime stays healthy. */
export class KitLimitError extends Error {
  override name = 'KitLimitError';
  readonly limit: KitLimitKind;
  constructor(limit: KitLimitKind, message: string) {
    super(message);
    this.limit = limit;
  }
}

/** A run that outlasted its time limit: one wording, wherever the limit is found passed. */
export function kitTimeLimitError(timeoutMs: number): KitLimitError {
  return new KitLimitError('time', `kit exceeded its time limit of ${timeoutMs} ms`);
}

/** A hook threw, returned something unusable, or does not follow the hook convention. */
export class KitHookError extends Error {
  override name = 'KitHookError';
}

/** A phase decided the run cannot go on: missing inputs, a CHECK or VERIFY finding, a missing credential. */
export class KitPhaseError extends Error {
  override name = 'KitPhaseError';
}

/**
 * Thrown by a host capability when its message is meant for the kit author; any other error from a
 * capability reaches the guest only as "host function <name> failed", since host errors may carry
 * internals (URLs, SQL, paths).
 */
export class HostCapabilityError extends Error {
  override name = 'HostCapabilityError';
}

const MAX_MESSAGE_LENGTH = 2000;

/** Untrusted text as one line: control characters dropped, line breaks collapsed, trimmed. */
export function normaliseGuestText(text: string): string {
  // eslint-disable-next-line no-control-regex
  // A run of white space holding a line break becomes one space. Matched as whole runs: /\s*\n\s*/
  // tried every position of a run without one against all the rest of it, quadratic in its length
  // (a kit.log of 100,000 spaces held the worker's thread for 25 s).
  return text
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
    .replace(/\s+/g, (run) => (run.includes('\n') ? ' ' : run))
    .trim();
}

/**
 * Makes untrusted text safe for a message: bounded, single line, no control characters. Text that
 * may carry a secret is redacted (`redact`) while the secret still reads as it was sent, and again
 * once cleaned: dropping control characters and collapsing line breaks can join what a kit split
 * (`ghp_\u0001…`, a passphrase a word per line) into the secret whole.
 */
export function cleanGuestMessage(text: unknown, redact: (text: string) => string = (same) => same): string {
  const raw = typeof text === 'string' ? redact(text) : 'unknown error';
  const cleaned = redact(normaliseGuestText(raw));
  if (cleaned === '') return 'unknown error';
  return cleaned.length > MAX_MESSAGE_LENGTH ? `${cleaned.slice(0, MAX_MESSAGE_LENGTH)}…` : cleaned;
}
