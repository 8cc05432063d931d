/**
 * The runtime a worker keeps for its lifetime: one isolate pool, the threads that validate outputs
 * (each keeping compiled output schemas), the threads that redact secrets from long reports, one
 * set of limits. Create it once per process and `close()` it on shutdown, which cancels the runs
 * still going.
 */
import type { KitPackage } from './kit-package.ts';
import { resolveKitLimits, type KitLimits } from './limits.ts';
import { createOutputValidation, type OutputValidationOptions } from './output-validation.ts';
import { IsolatePool, type IsolatePoolOptions, type IsolatePoolStats } from './sandbox/isolate-pool.ts';
import { settledWithin } from './bounded-waits.ts';
import { executeKit, type KitExecutionRequest, type KitExecutionResult } from './execute-kit.ts';
import { createSecretRedaction, type SecretRedactionOptions } from './secret-redaction.ts';

export type KitRuntimeOptions = {
  limits?: Partial<KitLimits>;
  pool?: Partial<IsolatePoolOptions>;
  /** Where and for how long a run's outputs are validated (output-validation.ts). */
  validation?: Partial<OutputValidationOptions>;
  /** Where and for how long the long texts and APPLY results of runs that opened credentials are redacted (secret-redaction.ts). */
  redaction?: Partial<SecretRedactionOptions>;
  /** Called with errors that are bugs of the runtime or its caller, never kit errors; for logging. */
  onInternalError?: (error: unknown) => void;
};

export type KitRuntime = {
  readonly limits: Readonly<KitLimits>;
  /** Runs a kit's phases; never rejects for anything the kit does (see KitExecutionResult.status). */
  execute(kit: KitPackage, request: KitExecutionRequest): Promise<KitExecutionResult>;
  stats(): IsolatePoolStats;
  /**
   * Waits, `timeoutMs` at most, until the host calls that were running have ended — a call whose run
   * is over goes on until it notices, its clean-up (a clone's directory) with it. True when they have.
   * A worker waits for it on shutdown, after the runs, so the process does not exit in between.
   */
  settleHostCalls(timeoutMs: number): Promise<boolean>;
  close(): void;
};

export function createKitRuntime(options: KitRuntimeOptions = {}): KitRuntime {
  const limits = Object.freeze(resolveKitLimits(options.limits));
  const pool = new IsolatePool(limits, options.pool);
  const validation = createOutputValidation(options.validation);
  const redaction = createSecretRedaction(options.redaction);
  // Closing cancels the runs still going, so none of their host calls (a push) outlives the runtime.
  const closing = new AbortController();
  const hostCallsRunning = new Set<Promise<unknown>>();
  const dependencies = { pool, limits, validation, redaction, closing: closing.signal, hostCallsRunning, ...(options.onInternalError ? { onInternalError: options.onInternalError } : {}) };
  return {
    limits,
    execute: (kit, request) => executeKit(dependencies, kit, request),
    stats: () => pool.stats(),
    settleHostCalls: (timeoutMs) => settledWithin(hostCallsRunning, timeoutMs),
    close: () => {
      closing.abort();
      pool.close();
      validation.close();
      redaction.close();
    },
  };
}
