/** What one kit run may consume. Every limit, when exceeded, fails that run with a KitLimitError. */
export type KitLimits = {
  /** Wall time for all sandboxed work of one run (hooks, rendering, host calls they make). */
  timeoutMs: number;
  /** Heap of one isolate, in MiB; an isolate that exceeds it is disposed and replaced. */
  memoryMb: number;
  /** Size of one rendered output, in UTF-8 bytes. */
  maxOutputBytes: number;
  /** Size of all rendered outputs of a run together, and of any one hook result. */
  maxTotalOutputBytes: number;
  /** Nesting depth of blocks within a template, and of partials within partials. */
  maxTemplateDepth: number;
  /** Host-function calls (log included) one run may make. */
  maxHostCalls: number;
};

export const DEFAULT_KIT_LIMITS: Readonly<KitLimits> = Object.freeze({
  timeoutMs: 5000,
  memoryMb: 64,
  maxOutputBytes: 1024 * 1024,
  maxTotalOutputBytes: 8 * 1024 * 1024,
  maxTemplateDepth: 32,
  maxHostCalls: 500,
});

export function resolveKitLimits(overrides: Partial<KitLimits> = {}): KitLimits {
  const limits = { ...DEFAULT_KIT_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value <= 0) throw new RangeError(`kit limit ${name} must be a positive integer`);
  }
  // isolated-vm refuses isolates below 8 MiB.
  if (limits.memoryMb < 8) throw new RangeError('kit limit memoryMb must be at least 8');
  return limits;
}

/**
 * What one kit package may hold, checked when it is loaded (at publish, by `kit validate`, and when
 * a worker loads a version). Handlebars' parser costs tens of microseconds per expression on the
 * host, and compiling to JavaScript (done in the isolate) about ten times that and ~24 KB of heap,
 * so expressions are counted from the text (`countTemplateExpressions`) and capped before any parse.
 */
export const KIT_TEMPLATE_LIMITS = Object.freeze({
  /** Expressions in one template (an output's template, its filename, or a partial). */
  maxExpressionsPerTemplate: 2000,
  /** Expressions in all of a kit's templates together. */
  maxExpressionsPerKit: 5000,
});
