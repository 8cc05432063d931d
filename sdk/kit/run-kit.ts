/**
 * Running a kit the way the server does — same runtime, same sandbox, same limits — from a
 * directory, for kit tests and `specwright kit test`. Components of composite kits are found as
 * sibling directories (`<kitsDir>/<kitId>`), the same layout as `kits/` in this repository.
 */
import { join, dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  createKitRuntime,
  type HostCapability,
  type KitExecutionResult,
  type KitLimits,
  type KitOutputRecord,
  type KitPackage,
  type KitResolver,
  type KitRuntime,
} from '../../kit-runtime/index.ts';
import { loadKitDirectory, loadKitDirectoryOrThrow } from './kit-directory.ts';

export type RunKitForTestOptions = {
  tenantId?: string;
  dryRun?: boolean;
  skipApply?: boolean;
  /** Opened credentials by id, as the server would open them for APPLY. */
  credentials?: Record<string, Record<string, unknown>>;
  /** Host capabilities to lend, e.g. createGitCapabilities(…). */
  capabilities?: Record<string, HostCapability>;
  /** Where components of composite kits live; default: the kit directory's parent. */
  kitsDir?: string;
  /** A runtime of your own (other limits); default: one shared runtime with the server's defaults. */
  runtime?: KitRuntime;
};

export type KitTestResult = KitExecutionResult & {
  kit: KitPackage;
  /** The output with this id; throws when there is none, naming the ids there are. */
  output(outputId: string): KitOutputRecord;
  /** A json or yaml output's content, parsed; throws, naming the output, for another type or content that does not parse. */
  parsed(outputId: string): unknown;
  /** Every output valid (warnings allowed) and the run not failed. */
  ok: boolean;
};

let sharedRuntime: KitRuntime | undefined;

/** The runtime kit tests share: default limits, like a server with no overrides. */
export function testRuntime(limits?: Partial<KitLimits>): KitRuntime {
  if (limits) return createKitRuntime({ limits });
  sharedRuntime ??= createKitRuntime();
  return sharedRuntime;
}

/** Disposes the shared runtime's isolates (call from afterAll when a test file is done). */
export function closeTestRuntime(): void {
  sharedRuntime?.close();
  sharedRuntime = undefined;
}

/** Where a kit in `dir` finds its components: `kitsDir` when given, else the directory holding `dir`. */
export function componentsDirFor(dir: string, kitsDir?: string): string {
  return kitsDir ?? dirname(resolve(dir));
}

/** The directory of component `kitId`: `<kitsDir>/<kitId>`. */
export function componentDir(kitsDir: string, kitId: string): string {
  return join(kitsDir, kitId);
}

/** Resolves components from `<kitsDir>/<kitId>/kit.json`, checking the version when one is asked for. */
export function directoryKitResolver(kitsDir: string): KitResolver {
  const cache = new Map<string, Promise<KitPackage | null>>();
  return ({ kitId }) => {
    let loaded = cache.get(kitId);
    if (!loaded) {
      loaded = loadKitDirectory(componentDir(kitsDir, kitId)).then((result) => (result.ok ? result.kit : null));
      cache.set(kitId, loaded);
    }
    return loaded;
  };
}

/** Loads the kit in `dir` (throwing KitLoadError with every problem) and runs it once. */
export async function runKitForTest(dir: string, input: Record<string, unknown>, options: RunKitForTestOptions = {}): Promise<KitTestResult> {
  const { kit } = await loadKitDirectoryOrThrow(dir);
  return runLoadedKit(kit, dir, input, options);
}

export async function runLoadedKit(kit: KitPackage, dir: string, input: Record<string, unknown>, options: RunKitForTestOptions = {}): Promise<KitTestResult> {
  const runtime = options.runtime ?? testRuntime();
  const credentials = options.credentials ?? {};
  const result = await runtime.execute(kit, {
    tenantId: options.tenantId ?? 'kit-test',
    input,
    options: { dryRun: options.dryRun === true, skipApply: options.skipApply === true },
    openCredential: async (id) => credentials[id] ?? null,
    ...(options.capabilities ? { capabilities: options.capabilities } : {}),
    resolveKit: directoryKitResolver(componentsDirFor(dir, options.kitsDir)),
  });
  const output = (outputId: string): KitOutputRecord => {
    const found = result.outputs.find((o) => o.outputId === outputId);
    if (!found) throw new Error(`no output "${outputId}"; outputs: ${result.outputs.map((o) => o.outputId).join(', ') || 'none'} (${result.message ?? result.status})`);
    return found;
  };
  return {
    ...result,
    kit,
    output,
    parsed: (outputId) => {
      const found = output(outputId);
      // YAML reads almost any text (Markdown included) as something: only json and yaml outputs are parsed.
      if (found.outputType !== 'json' && found.outputType !== 'yaml') throw new Error(`output "${outputId}" is ${found.outputType}, not json or yaml; read its content instead`);
      try {
        return found.outputType === 'json' ? JSON.parse(found.content) : parseYaml(found.content);
      } catch (error) {
        throw new Error(`output "${outputId}" (${found.filename}, ${found.status}) is not valid ${found.outputType}: ${(error as Error).message.split('\n')[0]}`);
      }
    },
    ok: result.status !== 'failed' && result.outputs.every((o) => o.status !== 'invalid'),
  };
}
