/**
 * Built-in validation of rendered outputs by `outputType`. json and yaml are parsed and, when the
 * kit ships a schema, validated with ajv; markdown, text and code get cheap sanity checks. Compiled
 * schema validators are cached per kit content (fingerprint), since a kit version is immutable.
 * A run's outputs are validated together (`validateOutputsOfRun`), on a thread of their own
 * (output-validation.worker.ts), since parsing and checking megabytes of kit-made text is host work
 * no isolate's time limit covers.
 */
import type { KitOutputDeclaration } from './manifest.schema.ts';
import { createKitAjv, compileOutputSchema, meterPatternsForRun, type OutputSchemaValidator } from './output-schemas.ts';
import { parseYamlDocument } from './yaml-document.ts';

export type KitOutputStatus = 'valid' | 'warning' | 'invalid';
export type OutputVerdict = { status: KitOutputStatus; validationErrors: string[]; validationWarnings: string[] };

// Billion-laughs style alias expansion is the classic YAML bomb; real documents need few aliases.
const YAML_MAX_ALIAS_COUNT = 100;

export class OutputValidators {
  // Per kit version: one ajv instance for its schemas (as loadKitPackage compiles them), and each
  // schema's validator once compiled. The least recently used version goes first past `maxKits`.
  readonly #byKit = new Map<string, { ajv: ReturnType<typeof createKitAjv>; bySchema: Map<string, OutputSchemaValidator> }>();
  readonly #maxKits: number;

  constructor(maxKits = 256) {
    this.#maxKits = maxKits;
  }

  /**
   * The validator of one schema file of one kit version (`fingerprint`), compiled on first use.
   * loadKitPackage compiled every schema already, so this cannot fail for a loaded kit.
   */
  forSchema(fingerprint: string, file: string, source: string): OutputSchemaValidator {
    let kit = this.#byKit.get(fingerprint);
    if (kit) this.#byKit.delete(fingerprint);
    else {
      kit = { ajv: createKitAjv(), bySchema: new Map() };
      if (this.#byKit.size >= this.#maxKits) this.#byKit.delete(this.#byKit.keys().next().value as string);
    }
    this.#byKit.set(fingerprint, kit);
    let validator = kit.bySchema.get(file);
    if (!validator) kit.bySchema.set(file, (validator = compileOutputSchema(kit.ajv, source)));
    return validator;
  }
}

/** One run's outputs to validate: the kit version, the sources of the schemas they name, and each output. */
export type OutputValidationRequest = {
  fingerprint: string;
  schemas: Record<string, string>;
  outputs: Array<{ declaration: Pick<KitOutputDeclaration, 'outputType' | 'schema'>; content: string }>;
};

/** Validates a run's outputs under one pattern budget (see meterPatternsForRun), in order. */
export function validateOutputsOfRun(validators: OutputValidators, request: OutputValidationRequest): OutputVerdict[] {
  return meterPatternsForRun(() =>
    request.outputs.map(({ declaration, content }) => {
      const schema = declaration.schema;
      const validator = schema === undefined ? undefined : validators.forSchema(request.fingerprint, schema, request.schemas[schema] ?? '');
      return validateOutput(declaration, content, validator);
    }),
  );
}

export function validateOutput(
  declaration: Pick<KitOutputDeclaration, 'outputType'>,
  content: string,
  validator: OutputSchemaValidator | undefined,
): OutputVerdict {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (content.trim() === '') errors.push('output is empty');
  else if (content.includes('\u0000')) errors.push('output contains NUL characters');
  else if (declaration.outputType === 'json' || declaration.outputType === 'yaml') {
    const parsed = declaration.outputType === 'json' ? parseJson(content) : parseYaml(content, warnings);
    if (!parsed.ok) errors.push(parsed.error);
    else if (validator) errors.push(...checkAgainstSchema(validator, parsed.value));
    else warnings.push('no schema declared; only the syntax was checked');
  } else if (declaration.outputType === 'markdown') {
    // Leading blanks of one line only: \s would also take line breaks, and V8's backtracking engine
    // then tries every line start against all the blank lines after it, quadratic in them (100,000
    // empty lines took 28 s of the validation thread). The count is the same: a fence after blank
    // lines is still one match.
    const fences = content.match(/^[^\S\n\r\u2028\u2029]*(```|~~~)/gm)?.length ?? 0;
    if (fences % 2 === 1) warnings.push('a fenced code block is not closed');
  }
  if (content.includes('\uFFFD')) warnings.push('output contains U+FFFD replacement characters (mis-encoded text?)');
  const status: KitOutputStatus = errors.length > 0 ? 'invalid' : warnings.length > 0 ? 'warning' : 'valid';
  return { status, validationErrors: errors, validationWarnings: warnings };
}

/** ajv recurses as deep as the document when the schema does ($ref: '#'); parsing JSON does not. */
function checkAgainstSchema(validator: OutputSchemaValidator, value: unknown): string[] {
  try {
    return validator(value).map((e) => `schema: ${e}`);
  } catch (error) {
    return [`schema: cannot be checked: ${error instanceof RangeError ? 'the document nests too deeply' : firstLine((error as Error)?.message)}`];
  }
}

type Parsed = { ok: true; value: unknown } | { ok: false; error: string };

function parseJson(content: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(content) };
  } catch (error) {
    return { ok: false, error: `not valid JSON: ${(error as Error).message}` };
  }
}

function parseYaml(content: string, warnings: string[]): Parsed {
  try {
    const document = parseYamlDocument(content, { prettyErrors: false });
    if (document.errors.length > 0) return { ok: false, error: `not valid YAML: ${firstLine(document.errors[0]?.message)}` };
    warnings.push(...document.warnings.map((w) => `YAML: ${firstLine(w.message)}`));
    return { ok: true, value: document.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT }) };
  } catch (error) {
    return { ok: false, error: `not valid YAML: ${firstLine((error as Error).message)}` };
  }
}

function firstLine(text: string | undefined): string {
  return (text ?? 'unknown error').split('\n')[0] as string;
}
