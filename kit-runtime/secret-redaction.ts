/**
 * Where a run's reports are redacted. Matching megabytes of text against every form of 64 secret
 * values (secret-redactor.ts) takes a few hundred milliseconds — over a second for some secrets —
 * and would hold the worker's thread, with graphile-worker, the heartbeat and every other job on it.
 * So once a run has opened a credential, a text over 16 KiB and every APPLY result are redacted on
 * a thread of their own (`createSecretRedaction`, on thread-pool.ts), which keeps each recent run's
 * redactor (`createRedactionPerformer`) and teaches it the secrets the run opened since; shorter texts, a few milliseconds at most, and every text
 * of a run that opened none, stay on the calling thread. A task that fails or overruns fails the
 * run, saying nothing about the text: its message may quote it, secrets and all.
 */
import { KitLimitError, cleanGuestMessage } from './errors.ts';
import { createSecretRedactor, type SecretRedactor } from './secret-redactor.ts';
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
/** `run` tells one run's requests from another's; `secrets` are all the run has opened so far. */
export type RedactionRequest = { run: number; secrets: unknown[]; task: RedactionTask };
export type RedactionAnswer = { done: unknown } | { failed: true };

/** How many runs' redactors a thread keeps: a redactor compiles its secrets' forms once, not per task. */
const KEPT_RUN_REDACTORS = 16;

/**
 * What a redaction thread does with each request. It keeps the redactors of its most recent runs
 * (a run may send hundreds of long log lines), teaching each only the secrets its run opened since
 * its last request; the oldest is dropped, secrets and all, once more runs come.
 */
export function createRedactionPerformer(): (request: RedactionRequest) => unknown {
  const kept = new Map<number, { redactor: SecretRedactor; remembered: number }>();
  return ({ run, secrets, task }) => {
    const entry = kept.get(run) ?? { redactor: createSecretRedactor(), remembered: 0 };
    kept.delete(run);
    kept.set(run, entry);
    if (kept.size > KEPT_RUN_REDACTORS) kept.delete(kept.keys().next().value!);
    for (const secret of secrets.slice(entry.remembered)) entry.redactor.remember(secret);
    entry.remembered = secrets.length;
    const { redactor } = entry;
    if ('redact' in task) return redactor.redact(task.redact);
    if ('reportable' in task) return cleanGuestMessage(task.reportable, redactor.redact);
    return redactor.redactJson(task.redactJson);
  };
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
  /**
   * A JSON value with every string in it, keys included, redacted. `jsonLength`, the length of the
   * JSON text it was parsed from, bounds the work: a short one is redacted where it arrives.
   */
  redactJson(value: unknown, jsonLength: number): Promise<unknown>;
  /** The run is over: tasks still waiting for their turn are refused, and let go of their text. */
  close(): void;
};

let runsStarted = 0;

export function createRunRedactor(redaction: SecretRedaction): RunRedactor {
  const run = (runsStarted += 1);
  const inline = createSecretRedactor();
  const secrets: unknown[] = [];
  const staysInline = (text: unknown) => secrets.length === 0 || typeof text !== 'string' || text.length <= INLINE_REDACTION_MAX_CHARS;
  // The run's tasks take their turns one after another, so a run that logs megabytes at a time
  // waits behind itself rather than filling the threads' queue ahead of other runs.
  let turn: Promise<unknown> = Promise.resolve();
  let closed = false;
  const onThread = (task: RedactionTask) => {
    const mine = turn.then(() => (closed ? Promise.reject(new Error('the run is over')) : redaction.perform({ run, secrets, task })));
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
    async redactJson(value, jsonLength) {
      return secrets.length === 0 || jsonLength <= INLINE_REDACTION_MAX_CHARS ? inline.redactJson(value) : onThread({ redactJson: value });
    },
    close() {
      closed = true;
    },
  };
}
