/**
 * Built-in validation of rendered outputs by `outputType`. json and yaml are parsed and, when the
 * kit ships a schema, validated with ajv; markdown, text and code get cheap sanity checks. Compiled
 * schema validators are cached per kit content (fingerprint), since a kit version is immutable.
 */
import type { KitPackage } from './kit-package.ts';
import type { KitOutputDeclaration } from './manifest.schema.ts';
import { createKitAjv, compileOutputSchema, type OutputSchemaValidator } from './output-schemas.ts';
import { parseYamlDocument } from './yaml-document.ts';

export type KitOutputStatus = 'valid' | 'warning' | 'invalid';
export type OutputVerdict = { status: KitOutputStatus; validationErrors: string[]; validationWarnings: string[] };

// Billion-laughs style alias expansion is the classic YAML bomb; real documents need few aliases.
const YAML_MAX_ALIAS_COUNT = 100;

export class OutputValidators {
  readonly #byKit = new Map<string, Map<string, OutputSchemaValidator>>();
  readonly #maxKits: number;

  constructor(maxKits = 256) {
    this.#maxKits = maxKits;
  }

  /** Validators of one kit version, by schema file; compiled on first use. */
  forKit(kit: KitPackage): Map<string, OutputSchemaValidator> {
    let validators = this.#byKit.get(kit.fingerprint);
    if (validators) {
      this.#byKit.delete(kit.fingerprint);
      this.#byKit.set(kit.fingerprint, validators);
      return validators;
    }
    validators = new Map();
    const ajv = createKitAjv();
    for (const output of kit.manifest.outputs) {
      if (output.schema === undefined || validators.has(output.schema)) continue;
      // loadKitPackage compiled every schema already, so this cannot fail for a loaded kit.
      validators.set(output.schema, compileOutputSchema(ajv, kit.files.get(output.schema) ?? ''));
    }
    this.#byKit.set(kit.fingerprint, validators);
    if (this.#byKit.size > this.#maxKits) this.#byKit.delete(this.#byKit.keys().next().value as string);
    return validators;
  }
}

export function validateOutput(
  declaration: KitOutputDeclaration,
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
    const fences = content.match(/^\s*(```|~~~)/gm)?.length ?? 0;
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
