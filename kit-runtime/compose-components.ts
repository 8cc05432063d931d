/**
 * Composite kits: a composite names other kits (`components: [{kitId, version?, prefix}]`); each
 * runs with the composite's input and options, its APPLY skipped, and its outputs join the
 * composite's under `<prefix>/` (filenames) and `<prefix>.` (output ids). The caller decides which
 * kit a component names through `resolveKit` (the server: the organization's published kits; the
 * SDK: sibling directories), so this file never looks anything up itself.
 */
import type { KitComponentDeclaration } from './manifest.schema.ts';
import type { KitPackage } from './kit-package.ts';
import type { KitLimits } from './limits.ts';
import type { KitExecutionResult } from './execution-result.ts';
import type { KitOutputRecord } from './render-outputs.ts';
import { KitLimitError, KitPhaseError } from './errors.ts';
import { newBundleNames } from './kit-package.ts';
import { MAX_RENDERED_OUTPUTS } from './render-outputs.ts';

/** Finds the kit a component names; null when there is none. `version` absent means the latest. */
export type KitResolver = (component: { kitId: string; version?: string }) => Promise<KitPackage | null>;

export type KitComponentRecord = { prefix: string; kitRef: string | null; status: KitExecutionResult['status']; message: string | null };

/** Composites inside composites are allowed up to this depth; a cycle fails at once. */
export const MAX_COMPOSITION_DEPTH = 4;

export type RunComponent = (kit: KitPackage, ancestry: readonly string[]) => Promise<KitExecutionResult>;

export async function composeComponents(args: {
  components: readonly KitComponentDeclaration[];
  resolveKit: KitResolver | undefined;
  ancestry: readonly string[];
  runComponent: RunComponent;
  ownOutputs: readonly KitOutputRecord[];
  limits: KitLimits;
  onLog: (prefix: string, entry: KitExecutionResult['logs'][number]) => void;
}): Promise<{ outputs: KitOutputRecord[]; components: KitComponentRecord[] }> {
  const { components, resolveKit, ancestry } = args;
  if (!resolveKit) throw new KitPhaseError('this composite kit needs the caller to resolve its components, and none was given');
  // `ancestry` ends with this composite: the MAX_COMPOSITION_DEPTH-th composite down composes nothing.
  if (ancestry.length >= MAX_COMPOSITION_DEPTH) {
    throw new KitPhaseError(`composites nest ${ancestry.length} deep, and a run allows ${MAX_COMPOSITION_DEPTH - 1}: ${ancestry.join(' → ')}`);
  }
  const records: KitComponentRecord[] = [];
  const merged: KitOutputRecord[] = [];
  // The composite's own outputs come first; a component output that collides with an earlier
  // output, by id or by name, is the one refused, as rendering refuses the later of two names.
  const usedNames = newBundleNames();
  const usedIds = new Set<string>();
  for (const own of args.ownOutputs) {
    usedIds.add(own.outputId);
    if (own.filename !== '') usedNames.add(own.filename, `output "${own.outputId}"`);
  }
  let totalBytes = args.ownOutputs.reduce((sum, o) => sum + o.contentSizeBytes, 0);

  for (const component of components) {
    const wanted = component.version === undefined ? component.kitId : `${component.kitId}@${component.version}`;
    let kit: KitPackage | null;
    try {
      kit = await resolveKit(component.version === undefined ? { kitId: component.kitId } : { kitId: component.kitId, version: component.version });
    } catch {
      throw new KitPhaseError(`component "${component.prefix}": ${wanted} could not be resolved`);
    }
    if (kit === null) throw new KitPhaseError(`component "${component.prefix}": kit ${wanted} was not found`);
    if (kit.manifest.metadata.id !== component.kitId || (component.version !== undefined && kit.manifest.metadata.version !== component.version)) {
      throw new KitPhaseError(`component "${component.prefix}": asked for ${wanted}, resolved ${kit.ref}`);
    }
    if (ancestry.includes(kit.manifest.metadata.id)) {
      throw new KitPhaseError(`component "${component.prefix}": ${kit.ref} includes itself (${[...ancestry, kit.manifest.metadata.id].join(' → ')})`);
    }
    const result = await args.runComponent(kit, ancestry);
    records.push({ prefix: component.prefix, kitRef: kit.ref, status: result.status, message: result.message });
    for (const entry of result.logs) args.onLog(component.prefix, entry);
    if (result.status === 'failed') throw new KitPhaseError(`component "${component.prefix}" (${kit.ref}) failed: ${result.message ?? 'unknown error'}`);

    for (const output of result.outputs) {
      const outputId = `${component.prefix}.${output.outputId}`;
      const record: KitOutputRecord = {
        ...output,
        outputId: usedIds.has(outputId) ? unusedId(outputId, usedIds) : outputId,
        filename: output.filename === '' ? '' : `${component.prefix}/${output.filename}`,
        validationErrors: [...output.validationErrors],
        validationWarnings: [...output.validationWarnings],
      };
      usedIds.add(record.outputId);
      if (record.outputId !== outputId) {
        record.validationErrors.push(`output id "${outputId}" is already used by another output of this run, so this one is kept as "${record.outputId}"`);
        record.status = 'invalid';
      }
      const nameProblem = record.filename === '' ? null : usedNames.problem(record.filename);
      if (nameProblem !== null) {
        record.validationErrors.push(nameProblem);
        record.status = 'invalid';
      } else if (record.filename !== '') {
        usedNames.add(record.filename, `output "${record.outputId}"`);
      }
      // The output cap is the run's, as the size cap is: each component keeps within it alone, but
      // ten of them would store ten times as many.
      if (args.ownOutputs.length + merged.length >= MAX_RENDERED_OUTPUTS) {
        throw new KitPhaseError(`the kit would render more than ${MAX_RENDERED_OUTPUTS} outputs (with its components)`);
      }
      totalBytes += record.contentSizeBytes;
      if (totalBytes > args.limits.maxTotalOutputBytes) {
        throw new KitLimitError('output-size', `kit exceeded its total output size limit of ${args.limits.maxTotalOutputBytes} bytes (with its components)`);
      }
      merged.push(record);
    }
  }
  return { outputs: merged, components: records };
}

/** `<id>~2`, `<id>~3`, …: ids a manifest gives are slugs joined by dots, so "~" marks a renamed one. */
function unusedId(outputId: string, used: ReadonlySet<string>): string {
  let n = 2;
  while (used.has(`${outputId}~${n}`)) n++;
  return `${outputId}~${n}`;
}
