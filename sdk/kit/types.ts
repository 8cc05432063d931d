/**
 * Types for kit authors: the manifest (kit.json), what a hook receives, what it may return, and what
 * a run answers. Hooks are plain JavaScript run in the sandbox; these types document the contract
 * and let TypeScript-checked JSDoc (`// @ts-check`) or tests use it.
 */
import type {
  KitPhase,
  KitOutputStatus,
  OutputType,
} from '../../kit-runtime/index.ts';

export type {
  KitManifest,
  KitOutputDeclaration,
  KitComponentDeclaration,
  KitPhase,
  OutputType,
  KitOutputStatus,
  KitExecutionResult,
  KitExecutionStatus,
  KitExecutionError,
  KitOutputRecord,
  KitPhaseRecord,
  KitComponentRecord,
  KitLimits,
  KitLogEntry,
  KitLogLevel,
  HostCapability,
  KitPackage,
  KitPackageProblem,
  KitResolver,
} from '../../kit-runtime/index.ts';

/** What the server passes as a run's input (and what `examples/*.json` hold). Free-form beyond these. */
export type KitInput = {
  projectId?: string;
  businessProfile?: { company?: { name?: string; industry?: string; [key: string]: unknown }; [key: string]: unknown };
  discoveryAnswers?: Record<string, unknown>;
  [key: string]: unknown;
};

/** An output as hooks see it in `context.outputs` (VALIDATE, APPLY and VERIFY). */
export type KitHookOutput = {
  outputId: string;
  filename: string;
  outputType: OutputType;
  content: string;
  status: KitOutputStatus;
  validationErrors: string[];
  validationWarnings: string[];
};

/** The first argument of every hook: a JSON copy, fresh for each call. */
export type KitHookContext<Input = KitInput> = {
  phase: KitPhase;
  kit: { id: string; version: string; displayName: string };
  input: Input;
  options: { dryRun: boolean; skipApply: boolean };
  /** What the SPEC hook returned (null before, or without one). */
  spec: unknown;
  /** `{pools: {<file>: parsed pool}}`, or what the DISCOVER hook returned. */
  discovery: unknown;
  /** The outputs PLAN selected and its `data`. */
  plan: { outputs: string[]; data: unknown };
  outputs: KitHookOutput[];
  /** What the APPLY hook returned (VERIFY reads it). */
  applyResult: unknown;
  /** APPLY only: the opened credentials the kit declares, by id (not those declared `hostOnly`). */
  credentials?: Record<string, Record<string, unknown>>;
};

/** The second argument: the only functions a hook can call outside the sandbox. */
export type KitHookApi = {
  log(level: 'debug' | 'info' | 'warn' | 'error', ...parts: unknown[]): Promise<unknown>;
  /** Capabilities the host lends, e.g. `gitCommit` and `gitVerify` to platform kits. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- log narrows its first parameter
  [capability: string]: (...args: any[]) => Promise<unknown>;
};

/** What each phase's hook may return (see kits/README.md, "Phases"). */
export type KitHookResults = {
  SPEC: unknown;
  CHECK: { errors?: string[] } | null;
  DISCOVER: unknown;
  PLAN: { outputs?: string[]; data?: unknown } | null;
  VALIDATE: { outputs?: Record<string, { errors?: string[]; warnings?: string[] }> } | null;
  APPLY: unknown;
  VERIFY: { errors?: string[]; warnings?: string[] } | null;
};

export type KitHook<P extends KitPhase, Input = KitInput> = (
  context: KitHookContext<Input>,
  kit: KitHookApi,
) => KitHookResults[P] | Promise<KitHookResults[P]>;
