/**
 * The host end of the bridge: the only functions kit code can call outside its isolate. A call
 * arrives as (name, JSON text) and leaves as JSON text; names are checked against an explicit
 * table, the phase against the capability's allowed phases, and every answer is built here, so
 * nothing but strings produced by the host ever crosses back.
 *
 * A log line takes its place in `logs` when the call arrives and its text once redacted, which for
 * a long line happens on a thread (secret-redaction.ts): until then, and for good if redacting it
 * fails or the run ends first, it reads WITHHELD. `settle` waits for the lines still being redacted.
 *
 * Each capability call gets a signal that aborts once its phase is over, however it ends (`endPhase`:
 * the hook answered, failed or was stopped) or once the run is (the run's own signal: its time
 * limit, its caller cancelling it, the runtime closing). The hook is then answered at once, and
 * never with success: a push that finishes after its run was reported failed is what this prevents.
 */
import type { KitPhase } from '../manifest.schema.ts';
import type { KitLimits } from '../limits.ts';
import { HostCapabilityError, KitLimitError, kitTimeLimitError } from '../errors.ts';
import { settledWithin, untilAborted } from '../bounded-waits.ts';
import type { RunRedactor } from '../secret-redaction.ts';
import type { HostDispatcher } from './kit-sandbox.ts';

/** A function the host lends to hooks as `kit.<name>(argument)`; it receives and returns JSON values. */
export type HostCapability = {
  /** Phases whose hooks may call it; all phases when absent. */
  phases?: readonly KitPhase[];
  call(argument: unknown, call: HostCall): unknown;
};

/** Who is calling a capability, and until when anyone waits for its answer. */
export type HostCall = {
  phase: KitPhase;
  tenantId: string;
  kitRef: string;
  /**
   * Aborts when the phase that made the call is over, or the run: its hook answered or failed, the
   * run hit its time limit, was cancelled or its runtime closed. A capability must begin no side
   * effect after it and should hand it to the requests and child processes it waits on; whatever
   * it answers once it has aborted, the hook is told the call was stopped.
   */
  signal: AbortSignal;
};

export type KitLogLevel = 'debug' | 'info' | 'warn' | 'error';
export type KitLogEntry = { phase: KitPhase; level: KitLogLevel; message: string };

const LOG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'];
/** What a log line reads until its text is redacted, and for good if that fails. */
export const WITHHELD_LOG_MESSAGE = '[withheld: this line could not be checked for secrets]';
const CAPABILITY_NAME = /^[a-z][A-Za-z0-9]{0,63}$/;
const RESERVED_NAMES = new Set(['log']);

export function assertCapabilityNames(capabilities: Record<string, HostCapability>): void {
  for (const name of Object.keys(capabilities)) {
    if (!CAPABILITY_NAME.test(name) || RESERVED_NAMES.has(name)) {
      throw new TypeError(`host capability name "${name}" must be camelCase letters and digits and not "log"`);
    }
  }
}

export class HostBridge {
  readonly logs: KitLogEntry[] = [];
  readonly names: string[];
  readonly #capabilities: Record<string, HostCapability>;
  readonly #limits: KitLimits;
  readonly #identity: { tenantId: string; kitRef: string };
  readonly #redactor: Pick<RunRedactor, 'redact' | 'reportable'>;
  #calls = 0;
  /** Log lines still being redacted; the first failure to redact one fails the run. */
  readonly #redacting = new Set<Promise<void>>();
  #redactionFailure: { error: unknown } | undefined;
  #closed = false;
  #phase: KitPhase = 'SPEC';
  /** Aborts when the run is over; each phase's calls also stop when `#phaseOver` aborts. */
  readonly #runOver: AbortSignal;
  #phaseOver: AbortController | undefined;
  /** What capability calls of the current phase are given; aborted between phases. */
  #callSignal: AbortSignal = AbortSignal.abort();
  readonly #running: Set<Promise<unknown>>;

  constructor(options: {
    capabilities: Record<string, HostCapability>;
    limits: KitLimits;
    tenantId: string;
    kitRef: string;
    redactor: Pick<RunRedactor, 'redact' | 'reportable'>;
    /** The run's: aborts when it is over (time limit, cancelled, finished). */
    signal: AbortSignal;
    /**
     * Capability calls still running, across runs: one the hook stopped waiting for (its phase or
     * run ended) goes on until it notices, and its clean-up (a clone's directory) with it.
     */
    running: Set<Promise<unknown>>;
  }) {
    assertCapabilityNames(options.capabilities);
    this.#capabilities = options.capabilities;
    this.names = Object.keys(options.capabilities);
    this.#limits = options.limits;
    this.#identity = { tenantId: options.tenantId, kitRef: options.kitRef };
    this.#redactor = options.redactor;
    this.#runOver = options.signal;
    this.#running = options.running;
  }

  /** Calls from here on belong to `phase` (log lines are filed under it). */
  beginPhase(phase: KitPhase): void {
    this.endPhase();
    this.#phase = phase;
    this.#phaseOver = new AbortController();
    this.#callSignal = AbortSignal.any([this.#runOver, this.#phaseOver.signal]);
  }

  /** The phase's hook is done, however it ended: its capability calls still running are stopped. */
  endPhase(): void {
    this.#phaseOver?.abort();
  }

  readonly dispatcher: HostDispatcher = async (name, argumentJson) => {
    try {
      return JSON.stringify({ ok: true, value: (await this.#dispatch(name, argumentJson)) ?? null });
    } catch (error) {
      const failed = `host function ${String(name).slice(0, 64)} failed`;
      const message = error instanceof HostCapabilityError || error instanceof KitLimitError ? error.message : failed;
      return JSON.stringify({ ok: false, message: await this.#redactor.redact(message).catch(() => failed) });
    }
  };

  /**
   * Waits, until `deadline` at most, for the log lines still being redacted, then fails the run if
   * redacting one failed or it went over its host call limit (a hook may swallow either error).
   */
  async settle(deadline: number): Promise<void> {
    if (!(await settledWithin(this.#redacting, deadline - performance.now()))) throw kitTimeLimitError(this.#limits.timeoutMs);
    if (this.#redactionFailure) throw this.#redactionFailure.error;
    this.#throwIfOverLimit();
  }

  /** The run is over: lines still being redacted keep reading WITHHELD. */
  close(): void {
    this.#closed = true;
  }

  /** A hook may swallow the error it got for going over the limit; the run still fails. */
  #throwIfOverLimit(): void {
    if (this.#calls > this.#limits.maxHostCalls) {
      throw new KitLimitError('host-calls', `kit exceeded its host call limit of ${this.#limits.maxHostCalls} calls`);
    }
  }

  async #dispatch(name: unknown, argumentJson: unknown): Promise<unknown> {
    this.#calls++;
    this.#throwIfOverLimit();
    if (typeof name !== 'string' || typeof argumentJson !== 'string') throw new HostCapabilityError('malformed host call');
    if (argumentJson.length > this.#limits.maxOutputBytes) {
      throw new HostCapabilityError(`the argument of kit.${name} is larger than ${this.#limits.maxOutputBytes} bytes`);
    }
    const argument: unknown = JSON.parse(argumentJson);
    if (name === 'log') return this.#log(argument);
    if (!Object.hasOwn(this.#capabilities, name)) throw new HostCapabilityError(`kit.${name} is not a host function`);
    const capability = this.#capabilities[name] as HostCapability;
    if (capability.phases && !capability.phases.includes(this.#phase)) {
      throw new HostCapabilityError(`kit.${name} is not available in phase ${this.#phase}`);
    }
    const signal = this.#callSignal;
    if (signal.aborted) throw stoppedCall(name, signal);
    const called = new Promise((resolve) => resolve(capability.call(argument, { phase: this.#phase, ...this.#identity, signal })));
    const settled: Promise<unknown> = called.then(
      () => this.#running.delete(settled),
      () => this.#running.delete(settled),
    );
    this.#running.add(settled);
    const value = await untilAborted(called, signal, () => stoppedCall(name, signal));
    return value === undefined ? null : JSON.parse(JSON.stringify(value));
  }

  #log(argument: unknown): null {
    const { level, message } = (argument ?? {}) as { level?: unknown; message?: unknown };
    const entry: KitLogEntry = {
      phase: this.#phase,
      level: typeof level === 'string' && LOG_LEVELS.includes(level) ? (level as KitLogLevel) : 'info',
      message: WITHHELD_LOG_MESSAGE,
    };
    this.logs.push(entry);
    const redacting = this.#redactor.reportable(typeof message === 'string' ? message : String(message)).then(
      (reported) => {
        if (!this.#closed) entry.message = reported;
      },
      (error: unknown) => {
        this.#redactionFailure ??= { error };
      },
    );
    this.#redacting.add(redacting);
    void redacting.finally(() => this.#redacting.delete(redacting));
    return null;
  }
}

/** What the hook is told of a call whose phase or run ended first: the time limit, or that it was stopped. */
function stoppedCall(name: string, signal: AbortSignal): HostCapabilityError {
  const why = signal.reason instanceof KitLimitError ? signal.reason.message : 'its phase or run ended first';
  return new HostCapabilityError(`kit.${name} was stopped: ${why}`);
}
