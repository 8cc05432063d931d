/**
 * One isolate working for one (tenant, kit version). It holds a long-lived render context
 * (Handlebars + compiled templates) and compiled hook scripts; every run gets a fresh hook context
 * so nothing a hook leaves behind is visible to the next run.
 *
 * Every call into the isolate has two time guards: isolated-vm's own `timeout` (stops CPU-bound
 * code, microtasks included) and a host watchdog that disposes the isolate when a run outlives its
 * wall time while waiting (a promise that never settles, a slow host call). A sandbox whose isolate
 * was disposed — by the watchdog or by V8's memory limit — reports `healthy === false` and the pool
 * replaces it; the host process never notices.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import ivm from 'isolated-vm';
import { KitLimitError, KitHookError, cleanGuestMessage, kitTimeLimitError } from '../errors.ts';
import type { KitPackage } from '../kit-package.ts';
import type { KitLimits } from '../limits.ts';
import { RENDER_BOOTSTRAP } from './guest-render.ts';
import { HOOK_BOOTSTRAP } from './guest-hooks.ts';

const HANDLEBARS_SOURCE = readFileSync(createRequire(import.meta.url).resolve('handlebars/dist/handlebars.min.js'), 'utf8');
// V8 code cache for the Handlebars build, shared by every isolate this process creates.
let handlebarsCodeCache: ivm.ExternalCopy<ArrayBuffer> | undefined;

/** Host side of the bridge: answers a JSON string, never throws. */
export type HostDispatcher = (name: string, argumentJson: string) => Promise<string>;

export class KitSandbox {
  readonly fingerprint: string;
  readonly #limits: KitLimits;
  readonly #isolate: ivm.Isolate;
  #render: ivm.Reference<(requestJson: string) => string> | undefined;
  #expiredByWatchdog = false;

  private constructor(kit: KitPackage, limits: KitLimits) {
    this.fingerprint = kit.fingerprint;
    this.#limits = limits;
    this.#isolate = new ivm.Isolate({ memoryLimit: limits.memoryMb });
  }

  static async create(kit: KitPackage, limits: KitLimits, deadline: number): Promise<KitSandbox> {
    const sandbox = new KitSandbox(kit, limits);
    try {
      await sandbox.#guard(deadline, (timeout) => sandbox.#boot(kit, timeout));
    } catch (error) {
      sandbox.dispose();
      throw error;
    }
    return sandbox;
  }

  get healthy(): boolean {
    return !this.#isolate.isDisposed;
  }

  async #boot(kit: KitPackage, timeout: number): Promise<void> {
    const context = await this.#isolate.createContext();
    const script = await this.#isolate.compileScript(HANDLEBARS_SOURCE, {
      filename: 'specwright:handlebars.js',
      ...(handlebarsCodeCache ? { cachedData: handlebarsCodeCache } : { produceCachedData: true }),
    });
    const produced = (script as ivm.Script & ivm.CachedDataResult).cachedData;
    if (!handlebarsCodeCache && produced) handlebarsCodeCache = produced;
    await script.run(context, { timeout });
    script.release();
    const sources: Record<string, string> = {};
    for (const output of kit.manifest.outputs) sources[output.template] = kit.files.get(output.template) ?? '';
    for (const file of Object.values(kit.manifest.partials ?? {})) sources[file] = kit.files.get(file) ?? '';
    const config = {
      sources,
      partials: kit.manifest.partials ?? {},
      maxDepth: this.#limits.maxTemplateDepth,
      maxOutputBytes: this.#limits.maxOutputBytes,
      maxTotalOutputBytes: this.#limits.maxTotalOutputBytes,
    };
    this.#render = await context.evalClosure(RENDER_BOOTSTRAP, [JSON.stringify(config)], {
      timeout,
      filename: 'specwright:render.js',
      result: { reference: true },
    });
  }

  /** Renders many outputs in one call; request and answer are JSON strings (see guest-render.ts). */
  render(requestJson: string, deadline: number): Promise<string> {
    const render = this.#render;
    if (!render) throw new Error('sandbox is not booted');
    return this.#guard(deadline, async (timeout) => {
      const answer = await render.apply(undefined, [requestJson], { timeout, arguments: { copy: true }, result: { copy: true } });
      if (typeof answer !== 'string') throw new KitHookError('renderer answered something other than text');
      return answer;
    });
  }

  /** A fresh context for one run's hooks; release it when the run ends. */
  async beginHookRun(dispatcher: HostDispatcher, capabilityNames: string[], deadline: number): Promise<HookRun> {
    const context = await this.#guard(deadline, () => this.#isolate.createContext());
    const dispatch = new ivm.Reference(dispatcher);
    try {
      const hooks = await this.#guard(deadline, (timeout) =>
        context.evalClosure(HOOK_BOOTSTRAP, [dispatch, JSON.stringify(capabilityNames)], {
          timeout,
          filename: 'specwright:bridge.js',
          result: { reference: true },
        }),
      );
      return new HookRun(this, context, dispatch, hooks as ivm.Reference<GuestHooks>);
    } catch (error) {
      releaseQuietly(context, dispatch);
      throw error;
    }
  }

  /**
   * Runs `operation` with the remaining wall time, translating every way isolated-vm reports a
   * broken limit into a KitLimitError with a message fit for the kit author.
   */
  async #guard<T>(deadline: number, operation: (timeoutMs: number) => Promise<T>): Promise<T> {
    const remaining = Math.floor(deadline - performance.now());
    if (remaining <= 0) throw this.#timeLimitError();
    let watchdog: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      watchdog = setTimeout(() => {
        this.#expiredByWatchdog = true;
        this.dispose();
        reject(this.#timeLimitError());
      }, remaining + 25);
    });
    try {
      return await Promise.race([operation(remaining), expired]);
    } catch (error) {
      throw this.#translate(error);
    } finally {
      clearTimeout(watchdog);
      expired.catch(() => {});
    }
  }

  #translate(error: unknown): Error {
    if (error instanceof KitLimitError || error instanceof KitHookError) return error;
    const message = error instanceof Error ? error.message : String(error);
    if (/timed out/i.test(message) || this.#expiredByWatchdog) {
      // A run that hit its time limit may have left the isolate mid-way through anything.
      this.dispose();
      return this.#timeLimitError();
    }
    if (/memory limit/i.test(message) || this.#isolate.isDisposed) {
      this.dispose();
      return new KitLimitError('memory', `kit exceeded its memory limit of ${this.#limits.memoryMb} MB`);
    }
    return new KitHookError(cleanGuestMessage(message));
  }

  #timeLimitError(): KitLimitError {
    return kitTimeLimitError(this.#limits.timeoutMs);
  }

  /** Internal to HookRun. */
  guard<T>(deadline: number, operation: (timeoutMs: number) => Promise<T>): Promise<T> {
    return this.#guard(deadline, operation);
  }

  dispose(): void {
    if (!this.#isolate.isDisposed) this.#isolate.dispose();
  }
}

type GuestHooks = (operation: 'load' | 'invoke', a: string, b: string) => Promise<string>;

export class HookRun {
  readonly #sandbox: KitSandbox;
  readonly #context: ivm.Context;
  readonly #dispatch: ivm.Reference<HostDispatcher>;
  readonly #hooks: ivm.Reference<GuestHooks>;
  readonly #loaded = new Set<string>();

  constructor(sandbox: KitSandbox, context: ivm.Context, dispatch: ivm.Reference<HostDispatcher>, hooks: ivm.Reference<GuestHooks>) {
    this.#sandbox = sandbox;
    this.#context = context;
    this.#dispatch = dispatch;
    this.#hooks = hooks;
  }

  /**
   * Loads the hook file into this run's context (once per run) and calls `functionName(context,
   * kit)`. Answers the guest's JSON text: {ok, value} or {ok: false, message, convention}.
   */
  async invoke(file: string, source: string, functionName: string, contextJson: string, deadline: number): Promise<string> {
    if (!this.#loaded.has(file)) {
      this.#loaded.add(file);
      const loaded = await this.#call('load', file, source, deadline);
      if (!(JSON.parse(loaded) as { ok: boolean }).ok) return loaded;
    }
    return this.#call('invoke', functionName, contextJson, deadline);
  }

  #call(operation: 'load' | 'invoke', a: string, b: string, deadline: number): Promise<string> {
    return this.#sandbox.guard(deadline, async (timeout) => {
      const answer: unknown = await this.#hooks.apply(undefined, [operation, a, b], {
        timeout,
        arguments: { copy: true },
        result: { promise: true, copy: true },
      });
      if (typeof answer !== 'string') throw new KitHookError('hook answered something other than JSON text');
      // The answer leaves the isolate as soon as the hook's promise settles, but code the hook
      // started after a host reply runs in a task of its own, outside isolated-vm's timeout: an
      // endless chain of microtasks (\`(function f() { Promise.resolve().then(f); })()\`) would keep
      // the isolate busy after the phase, the run and its time limit, in the pool. A call queued
      // behind it starts only once the isolate is idle, so the phase ends only then, or the watchdog
      // ends it (and the isolate) at the time limit.
      await this.#context.eval('undefined', { timeout });
      return answer;
    });
  }

  release(): void {
    releaseQuietly(this.#context, this.#dispatch, this.#hooks);
  }
}

/** After a dispose these handles are already dead and release() throws; that is fine. */
function releaseQuietly(...handles: Array<{ release(): void }>): void {
  for (const handle of handles) {
    try {
      handle.release();
    } catch {
      /* isolate already gone */
    }
  }
}
