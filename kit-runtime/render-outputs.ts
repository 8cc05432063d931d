/**
 * Rendering step between PLAN and VALIDATE: all planned outputs are rendered in ONE isolate call
 * (a call costs far more than a small template), then each rendered filename goes through the
 * safe-path gate and each content through the built-in validation.
 */
import { BUNDLE_MANIFEST_NAME, type KitPackage } from './kit-package.ts';
import type { KitOutputDeclaration, OutputType } from './manifest.schema.ts';
import type { KitLimits } from './limits.ts';
import { KitLimitError, KitHookError, cleanGuestMessage, type KitLimitKind } from './errors.ts';
import { explainUnsafePath, safeKitPath, describePath } from './safe-path.ts';
import { validateOutput, type KitOutputStatus, type OutputValidators } from './validate-outputs.ts';
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
  validators: OutputValidators;
  deadline: number;
}): Promise<KitOutputRecord[]> {
  const { planned, limits } = args;
  const request = JSON.stringify({
    data: args.input,
    meta: args.meta,
    outputs: planned.map((o) => ({
      outputId: o.id,
      template: o.template,
      filename: o.filename,
      declaration: { id: o.id, filename: o.filename, outputType: o.outputType },
    })),
  });
  const answer = JSON.parse(await args.sandbox.render(request, args.deadline)) as GuestAnswer;
  if ('limit' in answer) throw new KitLimitError(answer.kind, cleanGuestMessage(answer.limit));

  const byId = new Map(answer.results.map((r) => [r.outputId, r]));
  const schemaValidators = args.validators.forKit(args.kit);
  const usedNames = new Map<string, string>();
  let totalBytes = 0;
  return planned.map((declaration) => {
    const rendered = byId.get(declaration.id);
    if (!rendered) throw new KitHookError(`renderer returned no result for output "${declaration.id}"`);
    const content = typeof rendered.content === 'string' ? rendered.content : '';
    const contentSizeBytes = Buffer.byteLength(content, 'utf8');
    if (contentSizeBytes > limits.maxOutputBytes) {
      throw new KitLimitError('output-size', `kit exceeded its output size limit of ${limits.maxOutputBytes} bytes (output "${declaration.id}")`);
    }
    totalBytes += contentSizeBytes;
    if (totalBytes > limits.maxTotalOutputBytes) {
      throw new KitLimitError('output-size', `kit exceeded its total output size limit of ${limits.maxTotalOutputBytes} bytes`);
    }
    const record: KitOutputRecord = {
      outputId: declaration.id,
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
    const nameProblem = filenameProblem(rendered.filename, usedNames);
    if (nameProblem) {
      record.validationErrors.push(nameProblem);
      return record;
    }
    record.filename = safeKitPath(rendered.filename);
    usedNames.set(record.filename, declaration.id);
    const validator = declaration.schema === undefined ? undefined : schemaValidators.get(declaration.schema);
    Object.assign(record, validateOutput(declaration, content, validator));
    return record;
  });
}

function filenameProblem(filename: unknown, used: Map<string, string>): string | null {
  const unsafe = explainUnsafePath(filename);
  if (unsafe !== null) return `filename ${describePath(filename)} is unsafe: ${unsafe}`;
  const normalised = safeKitPath(filename);
  if (normalised === BUNDLE_MANIFEST_NAME) return `filename "${BUNDLE_MANIFEST_NAME}" is reserved for the bundle manifest`;
  const owner = used.get(normalised);
  if (owner !== undefined) return `filename "${normalised}" is already used by output "${owner}"`;
  return null;
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
