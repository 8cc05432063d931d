/**
 * Rendering step between PLAN and VALIDATE: all planned outputs are rendered in ONE isolate call
 * (a call costs far more than a small template), then each rendered filename goes through the
 * safe-path gate and each content through the built-in validation.
 */
import type { KitPackage } from './kit-package.ts';
import { newBundleNames } from './kit-package.ts';
import type { KitOutputDeclaration, OutputType } from './manifest.schema.ts';
import type { KitLimits } from './limits.ts';
import { KitLimitError, KitHookError, KitPhaseError, cleanGuestMessage, type KitLimitKind } from './errors.ts';
import { explainUnsafePath, type BundleNames, safeKitPath, describePath } from './safe-path.ts';
import type { OutputValidation } from './output-validation.ts';
import type { KitOutputStatus, OutputValidationRequest } from './validate-outputs.ts';
import type { KitSandbox } from './sandbox/kit-sandbox.ts';

export type KitOutputRecord = {
  outputId: string;
  /** Normalised, safe relative path; empty when the rendered name was unsafe (status invalid). */
  filename: string;
  outputType: OutputType;
  contentType: string;
  content: string;
  status: KitOutputStatus;
  validationErrors: string[];
  validationWarnings: string[];
  contentSizeBytes: number;
};

/** Data templates see besides the root input, as `@kit`, `@spec`, `@discovery`, `@plan`, `@output`. */
export type TemplateMeta = { kit: { id: string; version: string; displayName: string }; spec: unknown; discovery: unknown; plan: unknown };

type GuestAnswer =
  | { limit: string; kind: KitLimitKind }
  | { results: Array<{ outputId: string; filename?: string; content?: string; error?: string }> };

export async function renderOutputs(args: {
  sandbox: KitSandbox;
  kit: KitPackage;
  planned: readonly KitOutputDeclaration[];
  input: unknown;
  meta: TemplateMeta;
  limits: KitLimits;
  validation: OutputValidation;
  deadline: number;
}): Promise<KitOutputRecord[]> {
  const { limits } = args;
  const planned = expandOutputs(args.planned, args.input, args.meta);
  const request = JSON.stringify({
    data: args.input,
    meta: args.meta,
    outputs: planned.map(({ outputId, declaration: o, each }) => ({
      outputId,
      template: o.template,
      filename: o.filename,
      declaration: { id: o.id, filename: o.filename, outputType: o.outputType, ...each },
    })),
  });
  const answer = JSON.parse(await args.sandbox.render(request, args.deadline)) as GuestAnswer;
  if ('limit' in answer) throw new KitLimitError(answer.kind, cleanGuestMessage(answer.limit));

  const byId = new Map(answer.results.map((r) => [r.outputId, r]));
  const usedNames = newBundleNames();
  let totalBytes = 0;
  // The records whose outputs are left to validate, in order, and what validating them needs.
  const toValidate: KitOutputRecord[] = [];
  const validation: OutputValidationRequest = { fingerprint: args.kit.fingerprint, schemas: {}, outputs: [] };
  const records = planned.map(({ outputId, declaration }) => {
    const rendered = byId.get(outputId);
    if (!rendered) throw new KitHookError(`renderer returned no result for output "${outputId}"`);
    const content = typeof rendered.content === 'string' ? rendered.content : '';
    const contentSizeBytes = Buffer.byteLength(content, 'utf8');
    if (contentSizeBytes > limits.maxOutputBytes) {
      throw new KitLimitError('output-size', `kit exceeded its output size limit of ${limits.maxOutputBytes} bytes (output "${outputId}")`);
    }
    totalBytes += contentSizeBytes;
    if (totalBytes > limits.maxTotalOutputBytes) {
      throw new KitLimitError('output-size', `kit exceeded its total output size limit of ${limits.maxTotalOutputBytes} bytes`);
    }
    const record: KitOutputRecord = {
      outputId,
      filename: '',
      outputType: declaration.outputType,
      contentType: contentTypeOf(declaration.outputType),
      content,
      status: 'invalid',
      validationErrors: [],
      validationWarnings: [],
      contentSizeBytes,
    };
    if (rendered.error !== undefined) {
      record.validationErrors.push(`template failed: ${cleanGuestMessage(rendered.error)}`);
      return record;
    }
    // Checked against the names of the earlier outputs, so the later of two colliding ones is refused.
    const checked = checkedFilename(rendered.filename, usedNames);
    if ('problem' in checked) {
      record.validationErrors.push(checked.problem);
      return record;
    }
    record.filename = checked.name;
    usedNames.add(record.filename, `output "${outputId}"`);
    if (declaration.schema !== undefined) validation.schemas[declaration.schema] = args.kit.files.get(declaration.schema) ?? '';
    validation.outputs.push({ declaration, content });
    toValidate.push(record);
    return record;
  });
  if (toValidate.length > 0) {
    const verdicts = await args.validation.validate(validation);
    toValidate.forEach((record, index) => Object.assign(record, verdicts[index]));
  }
  return records;
}

/** Most outputs a run may produce once `forEach` outputs are expanded. */
export const MAX_RENDERED_OUTPUTS = 500;

type PlannedOutput = { outputId: string; declaration: KitOutputDeclaration; each?: { item: unknown; index: number } };

/**
 * A `forEach` output becomes one output per array item, with ids `<id>.<index>` and the item and
 * index visible to its templates as `@output.item` and `@output.index`.
 */
function expandOutputs(declarations: readonly KitOutputDeclaration[], input: unknown, meta: TemplateMeta): PlannedOutput[] {
  const planned: PlannedOutput[] = [];
  for (const declaration of declarations) {
    if (declaration.forEach === undefined) {
      planned.push({ outputId: declaration.id, declaration });
      continue;
    }
    const items = resolveForEach(declaration.forEach, input, meta);
    if (!Array.isArray(items)) {
      throw new KitPhaseError(`output "${declaration.id}": forEach ${declaration.forEach} is not an array`);
    }
    items.forEach((item, index) => planned.push({ outputId: `${declaration.id}.${index}`, declaration, each: { item, index } }));
    if (planned.length > MAX_RENDERED_OUTPUTS) throw new KitPhaseError(`the kit would render more than ${MAX_RENDERED_OUTPUTS} outputs`);
  }
  return planned;
}

function resolveForEach(path: string, input: unknown, meta: TemplateMeta): unknown {
  const [head, ...rest] = path.split('.');
  let value: unknown = head === '@spec' ? meta.spec : head === '@plan' ? meta.plan : head === '@discovery' ? meta.discovery : input;
  const keys = head?.startsWith('@') ? rest : [head as string, ...rest];
  for (const key of keys) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function checkedFilename(filename: unknown, used: BundleNames): { name: string } | { problem: string } {
  const unsafe = explainUnsafePath(filename);
  if (unsafe !== null) return { problem: `filename ${describePath(filename)} is unsafe: ${unsafe}` };
  const name = safeKitPath(filename);
  const problem = used.problem(name);
  return problem === null ? { name } : { problem };
}

const CONTENT_TYPES: Record<OutputType, string> = {
  json: 'application/json',
  yaml: 'application/yaml',
  markdown: 'text/markdown; charset=utf-8',
  text: 'text/plain; charset=utf-8',
  code: 'text/plain; charset=utf-8',
};

export function contentTypeOf(outputType: OutputType): string {
  return CONTENT_TYPES[outputType];
}
