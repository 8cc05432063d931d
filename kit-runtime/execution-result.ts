/**
 * The answer of a kit run and the two ways it is concluded: by its outputs (completed, partial, or
 * failed when none is usable) or by an error, which is classified here once. Unknown errors are
 * bugs of the runtime or its caller; they reach the caller's logger, never the result.
 */
import type { KitPhase } from './manifest.schema.ts';
import { KitHookError, KitLimitError, KitPhaseError, type KitLimitKind } from './errors.ts';
import type { KitOutputRecord } from './render-outputs.ts';
import type { KitLogEntry } from './sandbox/host-bridge.ts';
import type { KitComponentRecord } from './compose-components.ts';

export type KitExecutionStatus = 'completed' | 'partial' | 'failed';
/** RENDER and COMPOSE are the runtime's own steps between PLAN and VALIDATE. */
export type KitRunStep = KitPhase | 'RENDER' | 'COMPOSE';
export type KitPhaseRecord = { phase: KitRunStep; status: 'completed' | 'skipped' | 'failed'; durationMs: number; detail?: string };
export type KitExecutionError = {
  code: 'LIMIT_EXCEEDED' | 'HOOK_FAILED' | 'PHASE_FAILED' | 'INTERNAL_ERROR';
  limit?: KitLimitKind;
  phase: KitRunStep | null;
  message: string;
};
export type KitExecutionResult = {
  kitRef: string;
  status: KitExecutionStatus;
  /** Why the run failed or is partial; null when completed. */
  message: string | null;
  error: KitExecutionError | null;
  outputs: KitOutputRecord[];
  phases: KitPhaseRecord[];
  logs: KitLogEntry[];
  /** Composite kits: how each component run ended. */
  components: KitComponentRecord[];
  applyResult: unknown;
  verifyWarnings: string[];
  executionTimeMs: number;
};

export function summariseOutputs(result: KitExecutionResult): void {
  const invalid = result.outputs.filter((o) => o.status === 'invalid');
  if (invalid.length === 0) return;
  const names = invalid.map((o) => o.outputId).join(', ');
  const allInvalid = invalid.length === result.outputs.length;
  result.status = allInvalid ? 'failed' : 'partial';
  result.message = allInvalid ? `every output is invalid: ${names}` : `some outputs are invalid: ${names}`;
}

/** What a failed run reports when its own message could not be checked for secrets. */
const UNREDACTABLE_FAILURE = 'the run failed, and its error message could not be checked for secrets';

export async function failRun(
  result: KitExecutionResult,
  phase: KitRunStep | null,
  error: unknown,
  redact: (text: string) => Promise<string>,
  onInternalError?: (error: unknown) => void,
): Promise<void> {
  let failure: KitExecutionError;
  if (error instanceof KitLimitError) failure = { code: 'LIMIT_EXCEEDED', limit: error.limit, phase, message: error.message };
  else if (error instanceof KitHookError) failure = { code: 'HOOK_FAILED', phase, message: error.message };
  else if (error instanceof KitPhaseError) failure = { code: 'PHASE_FAILED', phase, message: error.message };
  else {
    onInternalError?.(error);
    failure = { code: 'INTERNAL_ERROR', phase, message: 'the kit runtime failed internally' };
  }
  failure.message = await redact(failure.message).catch(() => UNREDACTABLE_FAILURE);
  result.status = 'failed';
  result.error = failure;
  result.message = phase === null ? failure.message : `${phase}: ${failure.message}`;
}

