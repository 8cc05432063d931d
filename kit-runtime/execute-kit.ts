/**
 * The phase runner. A run walks SPEC → CHECK → DISCOVER → PLAN → (render) → VALIDATE → APPLY →
 * VERIFY, running the phases the kit declares: a declared phase with a hook runs the hook, one
 * without runs its default (see README). Rendering and the built-in output validation always
 * happen, because every output needs content and a status. A run never throws for anything a kit
 * does: it answers `failed` with a message fit for the kit author.
 */
import type { KitPhase } from './manifest.schema.ts';
import type { KitPackage } from './kit-package.ts';
import type { KitLimits } from './limits.ts';
import { KitHookError, KitLimitError, KitPhaseError, kitTimeLimitError } from './errors.ts';
import { failRun, summariseOutputs, type KitExecutionResult, type KitPhaseRecord, type KitRunStep } from './execution-result.ts';
import { composeComponents, type KitResolver } from './compose-components.ts';
import { findMissingInputs, parseHookResult, type HookResult } from './phase-contracts.ts';
import { renderOutputs, type TemplateMeta } from './render-outputs.ts';
import type { OutputValidation } from './output-validation.ts';
import type { IsolatePool } from './sandbox/isolate-pool.ts';
import type { KitSandbox, HookRun } from './sandbox/kit-sandbox.ts';
import { HostBridge, type HostCapability } from './sandbox/host-bridge.ts';
import { nestsDeeperThan } from './json-depth.ts';
import { describePath } from './safe-path.ts';
import { createRunRedactor, type SecretRedaction } from './secret-redaction.ts';

/** How deeply a run's input may nest (an API request body is held to 64 levels in all). */
export const MAX_INPUT_DEPTH = 64;

/** The PHASE_FAILED message of a run its `signal` (or the runtime closing) cancelled. */
export const RUN_CANCELLED_MESSAGE = 'the run was cancelled';

export type KitExecutionRequest = {
  /** Isolates are never shared across tenants. */
  tenantId: string;
  /** The run's input (projectId, businessProfile, discoveryAnswers, …): the templates' root. */
  input: Record<string, unknown>;
  options?: { dryRun?: boolean; skipApply?: boolean };
  /** Opens a stored credential; called only for APPLY of a kit that declares credentials. */
  openCredential?: (credentialId: string) => Promise<Record<string, unknown> | null>;
  /** Host functions lent to hooks as `kit.<name>(argument)`. */
  capabilities?: Record<string, HostCapability>;
  /** Composite kits: finds the kit each component names (see compose-components.ts). */
  resolveKit?: KitResolver;
  /**
   * Cancels the run (a worker shutting down): host calls in flight are stopped at once, and the run
   * fails with "the run was cancelled" when its current step ends.
   */
  signal?: AbortSignal;
};

export type { KitExecutionResult, KitExecutionStatus, KitExecutionError, KitPhaseRecord } from './execution-result.ts';

export type ExecutionDependencies = {
  pool: IsolatePool;
  limits: KitLimits;
  validation: OutputValidation;
  redaction: SecretRedaction;
  /** Aborts when the runtime closes: its runs are cancelled. */
  closing?: AbortSignal;
  /** Capability calls still running, across the runtime's runs (see KitRuntime.settleHostCalls). */
  hostCallsRunning: Set<Promise<unknown>>;
  onInternalError?: (error: unknown) => void;
};

/**
 * A component's place in the run of the composite that includes it: `ancestry` holds the ids of the
 * composites it is a component of, outermost first, and `deadline` is the whole run's.
 */
type ComponentOf = { ancestry: readonly string[]; deadline: number };

export async function executeKit(deps: ExecutionDependencies, kit: KitPackage, request: KitExecutionRequest, componentOf?: ComponentOf): Promise<KitExecutionResult> {
  const started = performance.now();
  // The time limit is the whole run's: components spend the composite's time, not their own, so
  // a composite of many slow kits (or composites of composites) cannot multiply it.
  const deadline = componentOf?.deadline ?? started + deps.limits.timeoutMs;
  const ancestry = componentOf?.ancestry ?? [];
  const { manifest } = kit;
  const redactor = createRunRedactor(deps.redaction);
  // Host calls learn through `runOver` that nobody waits for them any more: the run was cancelled,
  // reached its time limit (the timer), or ended (the finally below).
  const cancelled = AbortSignal.any([request.signal, deps.closing].filter((signal) => signal !== undefined));
  const ended = new AbortController();
  const runOver = AbortSignal.any([cancelled, ended.signal]);
  const throwIfCancelled = () => {
    if (cancelled.aborted) throw new KitPhaseError(RUN_CANCELLED_MESSAGE);
  };
  /** What a hook says, fit to report: redacted while still as sent, then cleaned. */
  const reportableAll = (texts: readonly unknown[]) => Promise.all(texts.map(redactor.reportable));
  /** The length of the JSON text the last hook answered: what redacting its result may cost. */
  let lastAnswerLength = 0;
  const bridge = new HostBridge({
    capabilities: request.capabilities ?? {},
    limits: deps.limits,
    tenantId: request.tenantId,
    kitRef: kit.ref,
    redactor,
    signal: runOver,
    running: deps.hostCallsRunning,
  });
  const result: KitExecutionResult = {
    kitRef: kit.ref,
    status: 'completed',
    message: null,
    error: null,
    outputs: [],
    phases: [],
    logs: bridge.logs,
    components: [],
    applyResult: null,
    verifyWarnings: [],
    executionTimeMs: 0,
  };
  const meta: TemplateMeta = {
    kit: { id: manifest.metadata.id, version: manifest.metadata.version, displayName: manifest.metadata.displayName },
    spec: null,
    discovery: { pools: kit.discoveryPools },
    plan: null,
  };
  let plannedIds = manifest.outputs.map((o) => o.id);
  let sandbox: KitSandbox | undefined;
  let hookRun: HookRun | undefined;
  let current: KitRunStep | null = null;

  const hookContext = (phase: KitPhase, extra: Record<string, unknown> = {}) => ({
    phase,
    kit: meta.kit,
    input: request.input,
    options: { dryRun: request.options?.dryRun === true, skipApply: request.options?.skipApply === true },
    spec: meta.spec,
    discovery: meta.discovery,
    plan: { outputs: plannedIds, data: meta.plan },
    outputs: result.outputs.map(({ outputId, filename, outputType, content, status, validationErrors, validationWarnings }) => ({
      outputId, filename, outputType, content, status, validationErrors, validationWarnings,
    })),
    applyResult: result.applyResult,
    ...extra,
  });

  /** Runs the phase's hook if the kit has one; `undefined` means "no hook, use the default". */
  async function callHook<P extends KitPhase>(phase: P, extra?: Record<string, unknown>): Promise<HookResult<P> | undefined> {
    const file = manifest.hooks?.[phase];
    if (file === undefined) return undefined;
    hookRun ??= await (sandbox as KitSandbox).beginHookRun(bridge.dispatcher, bridge.names, deadline);
    bridge.beginPhase(phase);
    let answer: string;
    try {
      answer = await hookRun.invoke(file, kit.files.get(file) ?? '', phase.toLowerCase(), JSON.stringify(hookContext(phase, extra)), deadline);
    } finally {
      // The hook waits for its own calls before it answers: any still running were cut off with it.
      bridge.endPhase();
    }
    throwIfCancelled();
    await bridge.settle(deadline);
    // A host call that held this thread (a capability's own work) keeps the watchdog from firing
    // until it lets go, and the hook may then answer first: a phase that ends past the deadline
    // still fails the run on its time limit.
    if (performance.now() > deadline) throw kitTimeLimitError(deps.limits.timeoutMs);
    if (Buffer.byteLength(answer, 'utf8') > deps.limits.maxTotalOutputBytes) {
      throw new KitLimitError('output-size', `kit exceeded its total output size limit of ${deps.limits.maxTotalOutputBytes} bytes (${phase} hook result)`);
    }
    lastAnswerLength = answer.length;
    const reply = JSON.parse(answer) as { ok: boolean; value?: unknown; message?: string; convention?: boolean };
    if (!reply.ok) {
      const why = await redactor.reportable(reply.message);
      throw new KitHookError(reply.convention ? `${phase} hook ${file} ${why}` : `${phase} hook (${file}) failed: ${why}`);
    }
    return parseHookResult(phase, file, reply.value);
  }

  const steps: Array<[KitRunStep, () => Promise<string | void>]> = [
    ['SPEC', async () => { meta.spec = (await callHook('SPEC')) ?? null; }],
    ['CHECK', async () => {
      const missing = findMissingInputs(request.input, manifest.inputs?.required ?? []);
      if (missing.length > 0) throw new KitPhaseError(`missing required inputs: ${missing.join(', ')}`);
      const errors = (await callHook('CHECK'))?.errors ?? [];
      if (errors.length > 0) throw new KitPhaseError(`CHECK failed: ${(await reportableAll(errors)).join('; ')}`);
    }],
    ['DISCOVER', async () => {
      const discovered = await callHook('DISCOVER');
      if (discovered !== undefined && discovered !== null) meta.discovery = discovered;
    }],
    ['PLAN', async () => {
      const plan = await callHook('PLAN');
      if (!plan) return;
      if (plan.outputs) {
        const unknown = plan.outputs.filter((id) => !manifest.outputs.some((o) => o.id === id));
        if (unknown.length > 0) throw new KitPhaseError(`PLAN selected unknown outputs: ${listUnknownIds(unknown)}`);
        plannedIds = manifest.outputs.map((o) => o.id).filter((id) => plan.outputs?.includes(id));
      }
      meta.plan = plan.data ?? null;
    }],
    ['RENDER', async () => {
      result.outputs = await renderOutputs({
        sandbox: sandbox as KitSandbox,
        kit,
        planned: manifest.outputs.filter((o) => plannedIds.includes(o.id)),
        input: request.input,
        meta,
        limits: deps.limits,
        validation: deps.validation,
        deadline,
      });
    }],
    ['COMPOSE', async () => {
      const composed = await composeComponents({
        components: manifest.components ?? [],
        resolveKit: request.resolveKit,
        ancestry: [...ancestry, manifest.metadata.id],
        // Components render and validate; only the composite itself applies anything.
        runComponent: (component, chain) =>
          executeKit(
            deps,
            component,
            { tenantId: request.tenantId, input: request.input, options: { ...request.options, skipApply: true }, signal: cancelled, ...(request.resolveKit ? { resolveKit: request.resolveKit } : {}) },
            { ancestry: chain, deadline },
          ),
        ownOutputs: result.outputs,
        limits: deps.limits,
        onLog: (prefix, entry) => bridge.logs.push({ ...entry, message: `[${prefix}] ${entry.message}` }),
      }).catch((error: unknown) => {
        // A component cut off by the cancellation failed because of it: the run says it was cancelled.
        throwIfCancelled();
        throw error;
      });
      result.outputs.push(...composed.outputs);
      result.components = composed.components;
    }],
    ['VALIDATE', async () => {
      const findings = (await callHook('VALIDATE'))?.outputs ?? {};
      for (const output of result.outputs) {
        const found = findings[output.outputId];
        if (!found) continue;
        output.validationErrors.push(...(await reportableAll(found.errors ?? [])));
        output.validationWarnings.push(...(await reportableAll(found.warnings ?? [])));
        output.status = output.validationErrors.length > 0 ? 'invalid' : output.validationWarnings.length > 0 ? 'warning' : 'valid';
      }
    }],
    ['APPLY', async () => {
      if (request.options?.dryRun) return 'dry run';
      if (request.options?.skipApply) return 'skipApply requested';
      if (result.outputs.some((o) => o.status === 'invalid')) return 'not applied: some outputs are invalid';
      if (manifest.hooks?.APPLY === undefined) return 'no APPLY hook';
      const credentials = await openDeclaredCredentials(manifest.credentials ?? [], request.openCredential, redactor.remember);
      // A hook may hand back what it was given: the result is reported, so it is redacted too.
      const applied = await callHook('APPLY', { credentials });
      result.applyResult = ((await redactor.redactJson(applied, lastAnswerLength)) as typeof result.applyResult) ?? null;
    }],
    ['VERIFY', async () => {
      const verdict = await callHook('VERIFY');
      result.verifyWarnings = await reportableAll(verdict?.warnings ?? []);
      const errors = verdict?.errors ?? [];
      if (errors.length > 0) throw new KitPhaseError(`VERIFY failed: ${(await reportableAll(errors)).join('; ')}`);
    }],
  ];

  const timeUp = setTimeout(() => ended.abort(kitTimeLimitError(deps.limits.timeoutMs)), Math.max(0, deadline - performance.now()));
  try {
    // Hooks and templates get a JSON copy of the input, which JSON.stringify cannot make a few
    // thousand levels down: such an input fails the run at its start, saying why.
    if (nestsDeeperThan(request.input, MAX_INPUT_DEPTH)) throw new KitPhaseError(`the run's input nests deeper than ${MAX_INPUT_DEPTH} levels`);
    sandbox = await deps.pool.acquire(request.tenantId, kit, deadline);
    for (const [phase, run] of steps) {
      if (phase === 'COMPOSE' && manifest.components === undefined) continue;
      if (phase !== 'RENDER' && phase !== 'VALIDATE' && phase !== 'COMPOSE' && !manifest.phases.includes(phase)) continue;
      current = phase;
      const phaseStarted = performance.now();
      const record: KitPhaseRecord = { phase, status: 'completed', durationMs: 0 };
      result.phases.push(record);
      try {
        throwIfCancelled();
        const skipped = await run();
        if (typeof skipped === 'string') Object.assign(record, { status: 'skipped', detail: skipped });
      } catch (error) {
        record.status = 'failed';
        throw error;
      } finally {
        record.durationMs = roundMs(performance.now() - phaseStarted);
      }
    }
    current = null;
    summariseOutputs(result);
  } catch (error) {
    const failedAt = current;
    await failRun(result, failedAt, error, redactor.redact, deps.onInternalError);
    // Outputs count as valid only once VALIDATE has run: a run that fails before VALIDATE finishes
    // (its hook threw or timed out, composing failed) must not ship them as checked.
    if (!result.phases.some((record) => record.phase === 'VALIDATE' && record.status === 'completed')) {
      for (const output of result.outputs) {
        if (output.status === 'invalid') continue;
        output.status = 'invalid';
        output.validationErrors.push(`not validated: the run failed at ${failedAt ?? 'start'} before VALIDATE finished`);
      }
    }
  } finally {
    clearTimeout(timeUp);
    ended.abort();
    // A hook that failed may have left log lines being redacted: they get what is left of the run's time.
    await bridge.settle(deadline).catch(() => {});
    bridge.close();
    redactor.close();
    hookRun?.release();
    if (sandbox) deps.pool.release(sandbox);
    result.executionTimeMs = roundMs(performance.now() - started);
  }
  return result;
}

/**
 * The credentials APPLY's hook is given, each remembered for redaction. A `hostOnly` credential is
 * opened here only to learn whether it is configured: host capabilities open it themselves, and the
 * hook, which never holds it, has nothing of it to echo, so nothing it reports is redacted for it
 * (a git credential's `repository` stays readable in the hook's result).
 */
async function openDeclaredCredentials(
  declared: ReadonlyArray<{ id: string; required: boolean; hostOnly?: boolean | undefined }>,
  open: KitExecutionRequest['openCredential'],
  remember: (secret: unknown) => void,
): Promise<Record<string, Record<string, unknown>>> {
  const opened: Record<string, Record<string, unknown>> = {};
  for (const { id, required, hostOnly } of declared) {
    let secret: Record<string, unknown> | null = null;
    try {
      secret = open ? await open(id) : null;
    } catch {
      // The opener's error may describe the secret or the key store; the kit author needs neither.
      throw new KitPhaseError(`credential "${id}" could not be opened`);
    }
    if (secret === null) {
      if (required) throw new KitPhaseError(`required credential "${id}" is not configured`);
      continue;
    }
    if (hostOnly) continue;
    remember(secret);
    opened[id] = secret;
  }
  return opened;
}

/** Unknown ids named in a message, at most this many: a PLAN result may list a million. */
const MAX_UNKNOWN_IDS_NAMED = 10;

/** The first few ids a PLAN hook made up, each quoted and cut short, and how many more there are. */
function listUnknownIds(ids: readonly string[]): string {
  const named = ids.slice(0, MAX_UNKNOWN_IDS_NAMED).map(describePath).join(', ');
  return ids.length > MAX_UNKNOWN_IDS_NAMED ? `${named} and ${ids.length - MAX_UNKNOWN_IDS_NAMED} more` : named;
}

function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100;
}
