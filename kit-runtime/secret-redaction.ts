/**
 * Where a run's reports are redacted. Matching megabytes of text against every form of 64 secret
 * values (secret-redactor.ts) takes a few hundred milliseconds — over a second for some secrets —
 * and would hold the worker's thread, with graphile-worker, the heartbeat and every other job on it.
 * So once a run has opened a credential, a text over 16 KiB and every APPLY result are redacted on
 * a thread of their own (`createSecretRedaction`, on thread-pool.ts), which rebuilds the redactor
 * from the run's secrets for each task; shorter texts, a few milliseconds at most, and every text
 * of a run that opened none, stay on the calling thread. A task that fails or overruns fails the
 * run, saying nothing about the text: its message may quote it, secrets and all.
 */
import { KitLimitError, cleanGuestMessage } from './errors.ts';
import { createSecretRedactor } from './secret-redactor.ts';
import { createThreadPool } from './thread-pool.ts';

/** Texts up to this many characters are redacted where they arrive: at most a few milliseconds each. */
export const INLINE_REDACTION_MAX_CHARS = 16 * 1024;

export type SecretRedactionOptions = {
  /** Threads redacting runs' reports side by side. */
  threads: number;
  /** How long redacting one text or APPLY result may take; past it the run fails (limit `time`). */
  timeoutMs: number;
};

export const DEFAULT_SECRET_REDACTION: Readonly<SecretRedactionOptions> = Object.freeze({ threads: 1, timeoutMs: 10_000 });

/** One text (`redact`), one message to clean (`reportable`, see cleanGuestMessage) or one JSON value. */
export type RedactionTask = { redact: string } | { reportable: string } | { redactJson: unknown };
export type RedactionRequest = { secrets: unknown[]; task: RedactionTask };
export type RedactionAnswer = { done: unknown } | { failed: true };

/** What a redaction thread does with one request. */
export function performRedaction({ secrets, task }: RedactionRequest): unknown {
  const redactor = createSecretRedactor();
  for (const secret of secrets) redactor.remember(secret);
  if ('redact' in task) return redactor.redact(task.redact);
  if ('reportable' in task) return cleanGuestMessage(task.reportable, redactor.redact);
  return redactor.redactJson(task.redactJson);
}

export type SecretRedaction = {
  perform(request: RedactionRequest): Promise<unknown>;
  close(): void;
};

/** `workerUrl` is the thread's module: tests start one that fails. */
export function createSecretRedaction(options: Partial<SecretRedactionOptions> = {}, workerUrl = new URL('./secret-redaction.worker.ts', import.meta.url)): SecretRedaction {
  const { threads, timeoutMs } = { ...DEFAULT_SECRET_REDACTION, ...options };
  const pool = createThreadPool<RedactionRequest, RedactionAnswer>({
    workerUrl,
    // No bound on waiting: each run has at most one task here at a time (createRunRedactor).
    threads,
    timeoutMs,
    overran: () => new KitLimitError('time', `redacting secrets from the run's reports took longer than ${timeoutMs / 1000} s`),
  });
  return {
    async perform(request) {
      let answer: RedactionAnswer;
      try {
        answer = await pool.run(request);
      } catch (error) {
        // A thread's own error (it died, the pool closed) may quote what it was redacting.
        throw error instanceof KitLimitError ? error : new Error('redacting secrets failed on its thread');
      }
      if ('failed' in answer) throw new Error('redacting secrets failed on its thread');
      return answer.done;
    },
    close: () => pool.close(),
  };
}

/** One run's redactor: remembers the secrets the run opens and redacts its reports against them. */
export type RunRedactor = {
  remember(secret: unknown): void;
  redact(text: string): Promise<string>;
  /** Untrusted text made fit for a message (cleanGuestMessage), redacted before and after cleaning. */
  reportable(text: unknown): Promise<string>;
  /** A JSON value with every string in it, keys included, redacted. */
  redactJson(value: unknown): Promise<unknown>;
  /** The run is over: tasks still waiting for their turn are refused, and let go of their text. */
  close(): void;
};

export function createRunRedactor(redaction: SecretRedaction): RunRedactor {
  const inline = createSecretRedactor();
  const secrets: unknown[] = [];
  const staysInline = (text: unknown) => secrets.length === 0 || typeof text !== 'string' || text.length <= INLINE_REDACTION_MAX_CHARS;
  // The run's tasks take their turns one after another, so a run that logs megabytes at a time
  // waits behind itself rather than filling the threads' queue ahead of other runs.
  let turn: Promise<unknown> = Promise.resolve();
  let closed = false;
  const onThread = (task: RedactionTask) => {
    const mine = turn.then(() => (closed ? Promise.reject(new Error('the run is over')) : redaction.perform({ secrets, task })));
    turn = mine.catch(() => {});
    return mine;
  };
  return {
    remember(secret) {
      inline.remember(secret);
      secrets.push(secret);
    },
    async redact(text) {
      return staysInline(text) ? inline.redact(text) : ((await onThread({ redact: text })) as string);
    },
    async reportable(text) {
      return staysInline(text) ? cleanGuestMessage(text, inline.redact) : ((await onThread({ reportable: text as string })) as string);
    },
    async redactJson(value) {
      // Its size is not known without walking it, which is most of the work.
      return secrets.length === 0 ? inline.redactJson(value) : onThread({ redactJson: value });
    },
    close() {
      closed = true;
    },
  };
}
