/**
 * The host end of the bridge: the only functions kit code can call outside its isolate. A call
 * arrives as (name, JSON text) and leaves as JSON text; names are checked against an explicit
 * table, the phase against the capability's allowed phases, and every answer is built here, so
 * nothing but strings produced by the host ever crosses back.
 */
import type { KitPhase } from '../manifest.schema.ts';
import type { KitLimits } from '../limits.ts';
import { HostCapabilityError, KitLimitError, cleanGuestMessage } from '../errors.ts';
import type { HostDispatcher } from './kit-sandbox.ts';

/** A function the host lends to hooks as `kit.<name>(argument)`; it receives and returns JSON values. */
export type HostCapability = {
  /** Phases whose hooks may call it; all phases when absent. */
  phases?: readonly KitPhase[];
  call(argument: unknown, call: { phase: KitPhase; tenantId: string; kitRef: string }): unknown;
};

export type KitLogLevel = 'debug' | 'info' | 'warn' | 'error';
export type KitLogEntry = { phase: KitPhase; level: KitLogLevel; message: string };

const LOG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'];
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
  phase: KitPhase = 'SPEC';
  readonly logs: KitLogEntry[] = [];
  readonly names: string[];
  readonly #capabilities: Record<string, HostCapability>;
  readonly #limits: KitLimits;
  readonly #identity: { tenantId: string; kitRef: string };
  readonly #redact: (text: string) => string;
  #calls = 0;

  constructor(options: {
    capabilities: Record<string, HostCapability>;
    limits: KitLimits;
    tenantId: string;
    kitRef: string;
    redact: (text: string) => string;
  }) {
    assertCapabilityNames(options.capabilities);
    this.#capabilities = options.capabilities;
    this.names = Object.keys(options.capabilities);
    this.#limits = options.limits;
    this.#identity = { tenantId: options.tenantId, kitRef: options.kitRef };
    this.#redact = options.redact;
  }

  readonly dispatcher: HostDispatcher = async (name, argumentJson) => {
    try {
      return JSON.stringify({ ok: true, value: (await this.#dispatch(name, argumentJson)) ?? null });
    } catch (error) {
      const message = error instanceof HostCapabilityError || error instanceof KitLimitError ? error.message : `host function ${String(name).slice(0, 64)} failed`;
      return JSON.stringify({ ok: false, message: this.#redact(message) });
    }
  };

  /** A hook may swallow the error it got for going over the limit; the run still fails. */
  throwIfOverLimit(): void {
    if (this.#calls > this.#limits.maxHostCalls) {
      throw new KitLimitError('host-calls', `kit exceeded its host call limit of ${this.#limits.maxHostCalls} calls`);
    }
  }

  async #dispatch(name: unknown, argumentJson: unknown): Promise<unknown> {
    this.#calls++;
    this.throwIfOverLimit();
    if (typeof name !== 'string' || typeof argumentJson !== 'string') throw new HostCapabilityError('malformed host call');
    if (argumentJson.length > this.#limits.maxOutputBytes) {
      throw new HostCapabilityError(`the argument of kit.${name} is larger than ${this.#limits.maxOutputBytes} bytes`);
    }
    const argument: unknown = JSON.parse(argumentJson);
    if (name === 'log') return this.#log(argument);
    if (!Object.hasOwn(this.#capabilities, name)) throw new HostCapabilityError(`kit.${name} is not a host function`);
    const capability = this.#capabilities[name] as HostCapability;
    if (capability.phases && !capability.phases.includes(this.phase)) {
      throw new HostCapabilityError(`kit.${name} is not available in phase ${this.phase}`);
    }
    const value = await capability.call(argument, { phase: this.phase, ...this.#identity });
    return value === undefined ? null : JSON.parse(JSON.stringify(value));
  }

  #log(argument: unknown): null {
    const { level, message } = (argument ?? {}) as { level?: unknown; message?: unknown };
    this.logs.push({
      phase: this.phase,
      level: typeof level === 'string' && LOG_LEVELS.includes(level) ? (level as KitLogLevel) : 'info',
      message: cleanGuestMessage(typeof message === 'string' ? message : String(message), this.#redact),
    });
    return null;
  }
}
