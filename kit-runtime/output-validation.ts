import { KitLimitError } from './errors.ts';
import { createThreadPool } from './thread-pool.ts';
import type { OutputValidationRequest, OutputVerdict } from './validate-outputs.ts';

export type OutputValidationOptions = {
  /** Threads validating runs side by side. */
  threads: number;
  /** How long one run's outputs may take to validate; past it the run fails (limit `time`). */
  timeoutMs: number;
};

export const DEFAULT_OUTPUT_VALIDATION: Readonly<OutputValidationOptions> = Object.freeze({ threads: 1, timeoutMs: 30_000 });

export type OutputValidation = {
  validate(request: OutputValidationRequest): Promise<OutputVerdict[]>;
  close(): void;
};

/**
 * Validates runs' outputs on threads of their own: a run may render 8 MiB, and parsing and
 * checking that much YAML or JSON takes seconds that would otherwise hold the worker's thread —
 * the API's too, when both run in one process — outside any time limit. Here a run's validation
 * has a limit of its own, and runs wait for a thread in turn.
 */
export function createOutputValidation(options: Partial<OutputValidationOptions> = {}): OutputValidation {
  const { threads, timeoutMs } = { ...DEFAULT_OUTPUT_VALIDATION, ...options };
  const pool = createThreadPool<OutputValidationRequest, { verdicts: OutputVerdict[] } | { failure: string }>({
    workerUrl: new URL('./output-validation.worker.ts', import.meta.url),
    // No bound on waiting: a worker runs a handful of executions at once, each waits for its turn.
    threads,
    timeoutMs,
    overran: () => new KitLimitError('time', `validating the outputs took longer than ${timeoutMs / 1000} s`),
  });
  return {
    async validate(request) {
      const answer = await pool.run(request);
      if ('failure' in answer) throw new Error(`output validation failed: ${answer.failure}`);
      return answer.verdicts;
    },
    close: () => pool.close(),
  };
}
