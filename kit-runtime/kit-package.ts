/**
 * A kit package is a manifest plus its files (templates, schemas, hooks, discovery pools). Loading
 * one checks everything that can be checked without running it, so an author learns about every
 * problem at publish time, each named by file and, where the parser says, line.
 */
import { createHash } from 'node:crypto';
import { Script } from 'node:vm';
import { parse as parseJavaScript, tokenizer, tokTypes } from 'acorn';
import Handlebars from 'handlebars';
import { parseKitManifest, type KitManifest } from './manifest.schema.ts';
import { createKitAjv, compileOutputSchema } from './output-schemas.ts';
import { BundleNames, explainUnsafePath, safeKitPath, describePath } from './safe-path.ts';
import { countTemplateExpressions, deepestSubexpression, measureTemplateDepth, type HandlebarsAstNode } from './template-depth.ts';
import { scanTemplatePartials, type TemplatePartials } from './template-partials.ts';
import { DEFAULT_KIT_LIMITS, KIT_TEMPLATE_LIMITS } from './limits.ts';
import { nestsDeeperThan } from './json-depth.ts';
import { parseYamlDocument } from './yaml-document.ts';

export type KitFiles = Readonly<Record<string, string>>;
export type KitPackageProblem = { file: string; line?: number; message: string };

/** A checked, immutable kit version; the only thing the runtime executes. */
export type KitPackage = {
  readonly manifest: KitManifest;
  /** Normalised path -> contents. */
  readonly files: ReadonlyMap<string, string>;
  /** Discovery pools parsed by extension (.json, .yaml/.yml; text otherwise). */
  readonly discoveryPools: Readonly<Record<string, unknown>>;
  /** sha256 over manifest and files: the identity of this exact kit content. */
  readonly fingerprint: string;
  /** `${id}@${version}`. */
  readonly ref: string;
};

export type LoadKitPackageResult = { ok: true; kit: KitPackage } | { ok: false; problems: KitPackageProblem[] };

export const MANIFEST_FILE = 'kit.json';
/** Reserved: a bundle writes its own manifest.json at the archive root. */
export const BUNDLE_MANIFEST_NAME = 'manifest.json';
/** The names one bundle may hold, its own manifest.json taken: every output's name is checked against these. */
export function newBundleNames(): BundleNames {
  const names = new BundleNames();
  names.reserve(BUNDLE_MANIFEST_NAME, 'the bundle manifest');
  return names;
}
const MAX_FILES = 500;
export const MAX_KIT_FILE_BYTES = 2 * 1024 * 1024;
/** All of a kit's output schema files together (each distinct file counted once). */
export const MAX_KIT_SCHEMA_BYTES = 256 * 1024;
const MAX_PACKAGE_BYTES = 10 * 1024 * 1024;
/** Pools reach hooks and templates as JSON, whose copies nest at most 256 levels. */
const MAX_POOL_DEPTH = 256;
const MAX_POOL_ALIASES = 100;

export function loadKitPackage(input: {
  manifest: unknown;
  files: KitFiles;
  maxTemplateDepth?: number;
  /**
   * A version published earlier, loaded to run: the checks that only guard what a publish may add
   * (the schema budget, fixed output names that clash, the platform strings' length, partials the
   * kit does not provide) are skipped, so a version stored before
   * they existed keeps running as it did.
   */
  stored?: boolean;
}): LoadKitPackageResult {
  const problems: KitPackageProblem[] = [];
  const parsed = parseKitManifest(input.manifest, { stored: input.stored === true });
  if (!parsed.ok) return { ok: false, problems: parsed.errors.map((message) => ({ file: MANIFEST_FILE, message })) };
  const manifest = parsed.manifest;
  const files = normaliseFiles(input.files, problems);
  const maxDepth = input.maxTemplateDepth ?? DEFAULT_KIT_LIMITS.maxTemplateDepth;

  const need = (file: string, usedBy: string): string | undefined => {
    const contents = files.get(file);
    if (contents !== undefined) return contents;
    // Files are stored under their normal form (NFC, no "./"); the manifest must name them so.
    const stored = storedNameOf(file);
    const spelledOtherwise = stored !== undefined && stored !== file && files.has(stored);
    problems.push({ file, message: spelledOtherwise ? `write this path as "${stored}", the name the file is stored under (referenced by ${usedBy})` : `missing file (referenced by ${usedBy})` });
    return undefined;
  };

  // Over either expression limit, nothing is parsed: the problems say so without the cost.
  const expressions = countKitExpressions(manifest, files);
  // By template key: the partials each template that compiled calls and declares; `null` once one did
  // not, and from the start for a stored version, which predates the check (a run renders such an
  // output invalid, as it always did), so a run's load does not walk every template for it.
  let partialsByTemplate: Map<string, TemplatePartials> | null = input.stored === true ? null : new Map();
  const checkTemplate = (file: string, source: string, key = file): KitPackageProblem[] => {
    const overTemplateLimit = overTemplateExpressionLimit(file, expressions.perTemplate.get(key) ?? 0);
    if (overTemplateLimit) return [overTemplateLimit];
    const nesting = deepestSubexpression(source);
    if (nesting > maxDepth) return [{ file, message: `subexpressions nest ${nesting} deep, over the limit of ${maxDepth}` }];
    if (expressions.overKitLimit) return [];
    const checked = checkTemplateSource(file, source, maxDepth);
    if (checked.ast === undefined) partialsByTemplate = null;
    else partialsByTemplate?.set(key, scanTemplatePartials(checked.ast));
    return checked.problems;
  };

  const ajv = createKitAjv();
  // Compiling a schema blocks the thread that loads the kit (the API's, at publish) for about 3 ms
  // per KiB, so each distinct schema file is compiled once, and only when all of them together
  // stay within the kit's budget.
  const schemaFiles = new Set(manifest.outputs.flatMap((output) => (output.schema === undefined ? [] : [output.schema])));
  const schemaBytes = [...schemaFiles].reduce((sum, file) => sum + Buffer.byteLength(files.get(file) ?? '', 'utf8'), 0);
  const schemasAffordable = input.stored === true || schemaBytes <= MAX_KIT_SCHEMA_BYTES;
  if (!schemasAffordable) {
    problems.push({ file: MANIFEST_FILE, message: `the output schemas together are ${schemaBytes} bytes, over the limit of ${MAX_KIT_SCHEMA_BYTES} bytes for one kit` });
  }
  const compiledSchemas = new Set<string>();
  // Without a PLAN hook every output renders on every run, so two fixed names that cannot unpack
  // side by side would make every run partial: refused here. (A PLAN hook may choose between them,
  // and a forEach output renders once per item, or not at all.)
  const fixedNames = newBundleNames();
  const everyOutputRenders = manifest.hooks?.PLAN === undefined && input.stored !== true;
  manifest.outputs.forEach((output, index) => {
    const where = `${MANIFEST_FILE} outputs[${index}]`;
    const template = need(output.template, `${where}.template`);
    if (template !== undefined) problems.push(...checkTemplate(output.template, template));
    if (output.filename.includes('{{')) {
      for (const p of checkTemplate(output.template, output.filename, filenameKey(index))) {
        problems.push({ file: MANIFEST_FILE, message: `outputs[${index}].filename: ${p.message}` });
      }
    } else {
      // In any letter case, or as a directory: what the bundle would refuse at every run.
      const name = safeKitPath(output.filename);
      const clash = (everyOutputRenders && output.forEach === undefined ? fixedNames : newBundleNames()).problem(name);
      if (clash) problems.push({ file: MANIFEST_FILE, message: `outputs[${index}].filename: ${clash}` });
      else if (output.forEach === undefined) fixedNames.add(name, `output "${output.id}"`);
    }
    if (output.schema === undefined) return;
    if (output.outputType !== 'json' && output.outputType !== 'yaml') {
      problems.push({ file: MANIFEST_FILE, message: `outputs[${index}].schema: only json and yaml outputs are validated against a schema` });
    }
    const schema = need(output.schema, `${where}.schema`);
    if (schema === undefined || !schemasAffordable || compiledSchemas.has(output.schema)) return;
    compiledSchemas.add(output.schema);
    try {
      compileOutputSchema(ajv, schema);
    } catch (error) {
      problems.push({ file: output.schema, ...lineOf(schema, error), message: (error as Error).message });
    }
  });

  for (const [name, file] of Object.entries(manifest.partials ?? {})) {
    const template = need(file, `${MANIFEST_FILE} partials.${name}`);
    if (template !== undefined) problems.push(...checkTemplate(file, template));
  }
  if (expressions.overKitLimit) problems.push(expressions.overKitLimit);
  // Needs every template's inline declarations, so only when all of them compiled.
  if (partialsByTemplate !== null && !expressions.overKitLimit) {
    problems.push(...checkPartialCalls(manifest, partialsByTemplate));
  }
  // One file may hold several phases' hooks (CHECK and PLAN sharing helpers): its syntax error is
  // one problem, however many phases name it.
  const hookSyntax = new Map<string, KitPackageProblem[]>();
  for (const [phase, file] of Object.entries(manifest.hooks ?? {})) {
    const source = need(file, `${MANIFEST_FILE} hooks.${phase}`);
    if (source === undefined) continue;
    let syntax = hookSyntax.get(file);
    if (syntax === undefined) {
      syntax = checkHookSyntax(file, source);
      hookSyntax.set(file, syntax);
      problems.push(...syntax);
    }
    if (syntax.length === 0 && input.stored !== true) problems.push(...checkHookDefinesPhase(file, source, phase));
  }
  const discoveryPools: Record<string, unknown> = {};
  for (const file of manifest.discovery.pools) {
    const source = need(file, `${MANIFEST_FILE} discovery.pools`);
    if (source === undefined) continue;
    try {
      discoveryPools[file] = parsePool(file, source);
    } catch (error) {
      problems.push({ file, ...lineOf(source, error), message: `cannot parse discovery pool: ${(error as Error).message}` });
    }
  }

  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    kit: Object.freeze({
      manifest,
      files,
      discoveryPools: Object.freeze(discoveryPools),
      fingerprint: fingerprintOf(manifest, files),
      ref: `${manifest.metadata.id}@${manifest.metadata.version}`,
    }),
  };
}

function storedNameOf(path: string): string | undefined {
  try {
    return safeKitPath(path);
  } catch {
    return undefined;
  }
}

function normaliseFiles(raw: KitFiles, problems: KitPackageProblem[]): Map<string, string> {
  const files = new Map<string, string>();
  const entries = Object.entries(raw ?? {});
  if (entries.length > MAX_FILES) problems.push({ file: '(package)', message: `more than ${MAX_FILES} files` });
  let total = 0;
  for (const [path, contents] of entries.slice(0, MAX_FILES)) {
    const unsafe = explainUnsafePath(path);
    if (unsafe !== null) {
      problems.push({ file: describePath(path), message: `unsafe file path: ${unsafe}` });
      continue;
    }
    if (typeof contents !== 'string') {
      problems.push({ file: path, message: 'file contents must be a string' });
      continue;
    }
    const bytes = Buffer.byteLength(contents, 'utf8');
    total += bytes;
    if (bytes > MAX_KIT_FILE_BYTES) problems.push({ file: path, message: `file is larger than ${MAX_KIT_FILE_BYTES} bytes` });
    const normalised = safeKitPath(path);
    if (files.has(normalised)) problems.push({ file: path, message: `duplicate of ${normalised} after normalisation` });
    files.set(normalised, contents);
  }
  if (total > MAX_PACKAGE_BYTES) problems.push({ file: '(package)', message: `package is larger than ${MAX_PACKAGE_BYTES} bytes` });
  return files;
}

// Handlebars' typings leave out its compiler classes, though `Handlebars.precompile` is built on them.
const OpcodeCompiler = (Handlebars as unknown as { Compiler: new () => { compile(ast: hbs.AST.Program, options: CompileOptions): unknown } }).Compiler;

const FILENAME_KEY = '\u0000filename:';
const filenameKey = (index: number) => `${FILENAME_KEY}${index}`;
const filenameIndexOf = (key: string) => (key.startsWith(FILENAME_KEY) ? Number(key.slice(FILENAME_KEY.length)) : undefined);
// Counting stops past the kit limit, so a count above it is only a lower bound.
const amount = (n: number) => (n > KIT_TEMPLATE_LIMITS.maxExpressionsPerKit ? `more than ${KIT_TEMPLATE_LIMITS.maxExpressionsPerKit}` : String(n));

function overTemplateExpressionLimit(file: string, expressions: number): KitPackageProblem | undefined {
  const limit = KIT_TEMPLATE_LIMITS.maxExpressionsPerTemplate;
  if (expressions <= limit) return undefined;
  return { file, message: `template has ${amount(expressions)} expressions, over the limit of ${limit} per template` };
}

/**
 * Counts every template's expressions from its text (each file once, however often it is used), so
 * a kit over the caps is refused before Handlebars parses anything: parsing is what costs.
 */
function countKitExpressions(manifest: KitManifest, files: ReadonlyMap<string, string>) {
  const { maxExpressionsPerKit } = KIT_TEMPLATE_LIMITS;
  const perTemplate = new Map<string, number>();
  const count = (key: string, source: string | undefined) => {
    if (source !== undefined && !perTemplate.has(key)) perTemplate.set(key, countTemplateExpressions(source, maxExpressionsPerKit));
  };
  manifest.outputs.forEach((output, index) => {
    count(output.template, files.get(output.template));
    if (output.filename.includes('{{')) count(filenameKey(index), output.filename);
  });
  for (const file of Object.values(manifest.partials ?? {})) count(file, files.get(file));
  let total = 0;
  for (const n of perTemplate.values()) total += n;
  if (total <= maxExpressionsPerKit) return { perTemplate, overKitLimit: undefined };
  const counted = [...perTemplate.values()].every((n) => n <= maxExpressionsPerKit);
  const largest = [...perTemplate]
    .filter(([key]) => !key.startsWith('\u0000'))
    .sort(([, a], [, b]) => b - a)
    .slice(0, 3)
    .map(([file, n]) => `${file} ${amount(n)}`);
  const overKitLimit: KitPackageProblem = {
    file: '(package)',
    message: `templates hold ${counted ? total : amount(total)} expressions in all, over the limit of ${maxExpressionsPerKit} per kit (largest: ${largest.join(', ')})`,
  };
  return { perTemplate, overKitLimit };
}

/**
 * Parses and compiles on the host without running template code. Only Handlebars' first compile
 * stage (to opcodes) runs here: it raises the errors a template can cause. The second, generating
 * JavaScript at ten times the cost and memory, throws only on Handlebars' own inconsistencies; the
 * isolate runs it, under the run's limits, when it first renders the template.
 */
function checkTemplateSource(file: string, source: string, maxDepth: number): { problems: KitPackageProblem[]; ast?: hbs.AST.Program } {
  try {
    const ast = Handlebars.parse(source);
    const depth = measureTemplateDepth(ast as unknown as HandlebarsAstNode);
    if (depth > maxDepth) {
      return { problems: [{ file, message: `blocks nest ${depth} deep, over the template depth limit of ${maxDepth}` }] };
    }
    new OpcodeCompiler().compile(ast, { noEscape: true, data: true });
    return { problems: [], ast };
  } catch (error) {
    const parseLine = /^Parse error on line (\d+)/.exec((error as Error).message ?? '');
    const line = (error as { lineNumber?: unknown }).lineNumber ?? (parseLine ? Number(parseLine[1]) : undefined);
    const message = `template does not compile: ${summariseParseError((error as Error).message)}`;
    return { problems: [typeof line === 'number' ? { file, line, message } : { file, message }] };
  }
}

/**
 * A partial called by a fixed name must be one the kit provides: a `manifest.partials` name, or one
 * an `{{#*inline}}` declares in any of its templates (an inline partial reaches the partials called
 * where it is declared, so where it may be used is not checked). Each name once per template.
 */
function checkPartialCalls(manifest: KitManifest, byTemplate: ReadonlyMap<string, TemplatePartials>): KitPackageProblem[] {
  const declared = Object.keys(manifest.partials ?? {});
  const provided = new Set(declared);
  for (const template of byTemplate.values()) {
    if (template.computedInline) return [];
    for (const name of template.inline) provided.add(name);
  }
  const problems: KitPackageProblem[] = [];
  const listed = declared.length > 10 ? `${declared.slice(0, 10).join(', ')}, …` : declared.join(', ');
  const known = declared.length > 0 ? `kit.json partials: ${listed}` : 'kit.json declares no partials';
  for (const [key, template] of byTemplate) {
    const outputIndex = filenameIndexOf(key);
    for (const call of template.calls) {
      if (provided.has(call.name)) continue;
      const message = `template uses partial "${call.name}", which the kit does not provide (${known}; no {{#*inline "${call.name}"}} either)`;
      problems.push(outputIndex === undefined ? { file: key, line: call.line, message } : { file: MANIFEST_FILE, message: `outputs[${outputIndex}].filename: ${message}` });
    }
  }
  return problems;
}

/** Handlebars puts an excerpt and a caret between "Parse error on line N:" and what it expected. */
function summariseParseError(message: string): string {
  const lines = message.split('\n').filter((line) => line.trim() !== '');
  const first = lines[0] ?? 'unknown error';
  const last = lines.at(-1) as string;
  return lines.length > 1 && /^Expecting|^Parse error/.test(last) && last !== first ? `${first} ${last}` : first;
}

/** Compiling a vm.Script parses without running anything. */
function checkHookSyntax(file: string, source: string): KitPackageProblem[] {
  try {
    new Script(source, { filename: file });
    return [];
  } catch (error) {
    // A SyntaxError's stack opens with `<file>:<line>`; one V8 gives up on (a RangeError for
    // nesting too deep to parse) has only node's own frames, whose line numbers are not the hook's.
    const stack = String((error as Error).stack ?? '');
    const line = stack.startsWith(`${file}:`) ? /^:(\d+)\n/.exec(stack.slice(file.length))?.[1] : undefined;
    const message = `hook is not valid JavaScript: ${(error as Error).message}`;
    return [line ? { file, line: Number(line), message } : { file, message }];
  }
}

/**
 * The runtime calls a phase's hook as the global function named after the phase in lower case
 * (`function plan(context, kit)`; sandbox/guest-hooks.ts). A publish is refused when the hook file
 * cannot be defining it: it declares that name only with `let`, `const` or `class` at the top,
 * which a script does not make global, or it never names it at all. Any other way of defining it
 * (`globalThis.plan = …`) is left to the run, as is syntax newer than acorn parses.
 */
function checkHookDefinesPhase(file: string, source: string, phase: string): KitPackageProblem[] {
  const name = phase.toLowerCase();
  const options = { ecmaVersion: 'latest', sourceType: 'script', locations: true } as const;
  let program: ReturnType<typeof parseJavaScript>;
  try {
    program = parseJavaScript(source, options);
  } catch {
    return [];
  }
  for (const statement of program.body) {
    if (statement.type === 'FunctionDeclaration' && statement.id.name === name) return [];
    const declared =
      statement.type === 'VariableDeclaration' && statement.declarations.some((declarator) => declarator.id.type === 'Identifier' && declarator.id.name === name)
        ? statement.kind
        : statement.type === 'ClassDeclaration' && statement.id.name === name
          ? 'class'
          : undefined;
    if (declared === 'var') return [];
    if (declared !== undefined) {
      const message = `hook declares ${name} with ${declared}, which a hook script does not make visible to the runtime: declare function ${name}(context, kit) for ${phase}`;
      return [{ file, line: statement.loc!.start.line, message }];
    }
  }
  for (const token of tokenizer(source, options)) {
    const text = source.slice(token.start, token.end);
    if (text === name || (token.type === tokTypes.string && text.slice(1, -1) === name)) return [];
  }
  return [{ file, message: `hook does not define function ${name}(context, kit), which the runtime calls for ${phase}` }];
}

/**
 * Pools travel to hooks and templates as JSON, so a pool must be a tree: a YAML alias that refers to
 * a node containing it would make a cycle, which JSON cannot express and every run would trip on.
 */
function parsePool(file: string, source: string): unknown {
  if (file.endsWith('.json')) return checkPoolShape(JSON.parse(source));
  if (file.endsWith('.yaml') || file.endsWith('.yml')) {
    const document = parseYamlDocument(source);
    if (document.errors.length > 0) throw document.errors[0];
    return checkPoolShape(document.toJS({ maxAliasCount: MAX_POOL_ALIASES }));
  }
  return source;
}

function checkPoolShape(value: unknown): unknown {
  if (containsCycle(value)) throw new Error('an alias refers to a node that contains it; a pool must be plain data without cycles');
  if (nestsDeeperThan(value, MAX_POOL_DEPTH)) throw new Error(`nests deeper than ${MAX_POOL_DEPTH} levels`);
  return value;
}

/** Walks without recursion, keeping the path from the root; a node met again on its own path is a cycle. */
function containsCycle(root: unknown): boolean {
  const onPath = new Set<object>();
  const pending: Array<{ node: unknown; leaving: boolean }> = [{ node: root, leaving: false }];
  while (pending.length > 0) {
    const { node, leaving } = pending.pop() as { node: unknown; leaving: boolean };
    if (node === null || typeof node !== 'object') continue;
    if (leaving) {
      onPath.delete(node);
      continue;
    }
    if (onPath.has(node)) return true;
    // Deeper than any pool may nest: the depth check refuses it, and the walk stops here.
    if (onPath.size > MAX_POOL_DEPTH) return false;
    onPath.add(node);
    pending.push({ node, leaving: true });
    for (const child of Object.values(node)) pending.push({ node: child, leaving: false });
  }
  return false;
}

function lineOf(source: string, error: unknown): { line?: number } {
  const match = /line (\d+)/.exec((error as Error).message ?? '') ?? /position (\d+)/.exec((error as Error).message ?? '');
  if (!match) return {};
  if (/line/.test(match[0])) return { line: Number(match[1]) };
  return { line: source.slice(0, Number(match[1])).split('\n').length };
}

function fingerprintOf(manifest: KitManifest, files: ReadonlyMap<string, string>): string {
  const hash = createHash('sha256').update(JSON.stringify(manifest));
  for (const path of [...files.keys()].sort()) hash.update(`\u0000${path}\u0000`).update(files.get(path) as string);
  return hash.digest('hex');
}
