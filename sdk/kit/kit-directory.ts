/**
 * A kit on disk: `kit.json` beside the files it names. Loading one reads exactly the files the
 * manifest references (templates, partials, schemas, hooks, discovery pools) — what publishing
 * uploads — and runs the runtime's own package checks, so a kit that loads here loads on the server.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { parseDocument } from 'yaml';
import {
  loadKitPackage,
  parseKitManifest,
  MANIFEST_FILE,
  MAX_KIT_FILE_BYTES,
  type KitManifest,
  type KitPackage,
  type KitPackageProblem,
} from '../../kit-runtime/index.ts';

export type LoadedKitDirectory =
  | { ok: true; dir: string; manifest: KitManifest; files: Record<string, string>; kit: KitPackage }
  /** `kitRef` (id@version) when kit.json is a valid manifest, though the kit does not load. */
  | { ok: false; dir: string; problems: KitPackageProblem[]; kitRef?: string };

/** Every file a manifest names, each once, in manifest order. */
export function referencedFiles(manifest: KitManifest): string[] {
  const files = [
    ...manifest.outputs.flatMap((output) => (output.schema === undefined ? [output.template] : [output.template, output.schema])),
    ...Object.values(manifest.partials ?? {}),
    ...Object.values(manifest.hooks ?? {}),
    ...manifest.discovery.pools,
  ];
  return [...new Set(files)];
}

export async function loadKitDirectory(dir: string): Promise<LoadedKitDirectory> {
  const noManifest = { ok: false as const, dir, problems: [{ file: MANIFEST_FILE, message: `no ${MANIFEST_FILE} in ${dir}` }] };
  let root: string;
  try {
    root = await realpath(dir);
  } catch (error) {
    return isMissing(error) ? noManifest : { ok: false, dir, problems: [{ file: MANIFEST_FILE, message: (error as Error).message }] };
  }
  // `kit validate my-kit/kit.json` is a common slip; the read below would only say ENOTDIR.
  if (!(await stat(root)).isDirectory()) {
    return { ok: false, dir, problems: [{ file: MANIFEST_FILE, message: `${dir} is not a directory: give the folder that holds ${MANIFEST_FILE}` }] };
  }
  const manifestFile = await readKitFile(root, dir, MANIFEST_FILE);
  if ('missing' in manifestFile) return noManifest;
  if ('problem' in manifestFile) return { ok: false, dir, problems: [{ file: MANIFEST_FILE, message: manifestFile.problem }] };
  const source = manifestFile.text;
  let raw: unknown;
  try {
    raw = JSON.parse(source);
  } catch (error) {
    return { ok: false, dir, problems: [{ file: MANIFEST_FILE, ...jsonErrorLine(source, error), message: `not valid JSON: ${(error as Error).message.replace(/ \(line \d+ column \d+\)$/, '')}` }] };
  }
  const parsed = parseKitManifest(raw);
  if (!parsed.ok) return { ok: false, dir, problems: parsed.errors.map((message) => manifestProblem(source, message)) };

  const files: Record<string, string> = {};
  const problems: KitPackageProblem[] = [];
  for (const file of referencedFiles(parsed.manifest)) {
    const read = await readKitFile(root, dir, file);
    if ('text' in read) files[file] = read.text;
    else if ('problem' in read) problems.push({ file, message: read.problem });
    // A missing file is reported by loadKitPackage, naming what references it.
  }
  const loaded = loadKitPackage({ manifest: raw, files });
  if (!loaded.ok || problems.length > 0) {
    // A file refused above is absent from `files`; loadKitPackage would call it missing as well.
    const refused = new Set(problems.map((p) => p.file));
    const located = loaded.ok ? [] : loaded.problems.filter((p) => !refused.has(p.file)).map((p) => locateProblem(p, source, files));
    const { id, version } = parsed.manifest.metadata;
    return { ok: false, dir, problems: [...problems, ...located], kitRef: `${id}@${version}` };
  }
  return { ok: true, dir, manifest: loaded.kit.manifest, files, kit: loaded.kit };
}

/** One file of the kit as publishing would upload it, or why it cannot be: kit.json and every referenced file alike. */
async function readKitFile(root: string, dir: string, file: string): Promise<{ text: string } | { problem: string } | { missing: true }> {
  try {
    // A symlink must not smuggle a file from outside the kit into a published package.
    const real = await realpath(join(dir, file));
    if (real !== root && !real.startsWith(root + sep)) return { problem: 'resolves outside the kit directory' };
    const read = await readRegularFile(real, MAX_KIT_FILE_BYTES);
    if ('problem' in read) return read;
    const text = decodeText(read.bytes);
    return typeof text === 'string' ? { text } : text;
  } catch (error) {
    return isMissing(error) ? { missing: true } : { problem: (error as Error).message };
  }
}

/**
 * The bytes of a regular file (symlinks followed), checked before reading: a FIFO or a device
 * would block the read forever or never end, and a huge file is never read only to be refused.
 */
async function readRegularFile(path: string, maxBytes = Infinity): Promise<{ bytes: Buffer } | { problem: string }> {
  const info = await stat(path);
  if (!info.isFile()) return { problem: 'not a regular file' };
  if (info.size > maxBytes) return { problem: `file is larger than ${maxBytes} bytes` };
  return { bytes: await readFile(path) };
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Kit files travel as JSON strings and the server stores them as text: bytes that are not UTF-8
 * would be silently replaced by U+FFFD, and NUL (UTF-16 text is full of them) is refused there.
 */
function decodeText(bytes: Uint8Array): string | { problem: string } {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { problem: 'is not valid UTF-8 text' };
  }
  return text.includes('\u0000') ? { problem: 'contains NUL characters; kit files must be UTF-8 text' } : text;
}

/** `file[:line]: message`, the one format every tool prints problems in. */
export function formatProblem(problem: KitPackageProblem): string {
  return `${problem.file}${problem.line === undefined ? '' : `:${problem.line}`}: ${problem.message}`;
}

export class KitLoadError extends Error {
  override name = 'KitLoadError';
  readonly problems: KitPackageProblem[];
  constructor(dir: string, problems: KitPackageProblem[]) {
    super(`kit in ${dir} does not load:\n${problems.map(formatProblem).join('\n')}`);
    this.problems = problems;
  }
}

/** For tests: the loaded kit, or a KitLoadError listing every problem. */
export async function loadKitDirectoryOrThrow(dir: string): Promise<Extract<LoadedKitDirectory, { ok: true }>> {
  const loaded = await loadKitDirectory(dir);
  if (!loaded.ok) throw new KitLoadError(dir, loaded.problems);
  return loaded;
}

export type KitExample = { name: string; file: string; input: Record<string, unknown> };

/** The largest example input read: far above what a server takes as a run's request body (1 MiB by default). */
export const MAX_EXAMPLE_BYTES = 16 * 1024 * 1024;

/** `examples/*.json`, sorted by name; each holds one run's input. */
export async function readKitExamples(dir: string): Promise<{ examples: KitExample[]; problems: KitPackageProblem[] }> {
  const examples: KitExample[] = [];
  const problems: KitPackageProblem[] = [];
  let names: string[];
  try {
    names = (await readdir(join(dir, 'examples'))).filter((name) => name.endsWith('.json')).sort();
  } catch (error) {
    // No examples folder: the caller says to add one. One that cannot be listed is not "no examples".
    if (!isMissing(error)) problems.push({ file: 'examples', message: `cannot be read as a folder: ${(error as Error).message}` });
    names = [];
  }
  for (const name of names) {
    const file = `examples/${name}`;
    let source: string;
    try {
      // A run's input reaches the server as a request body; one this large is never read only to be refused.
      const read = await readRegularFile(join(dir, file), MAX_EXAMPLE_BYTES);
      // Decoded as kit files are: a UTF-8 byte order mark (Windows editors write one) is not JSON.
      const text = 'problem' in read ? read : decodeText(read.bytes);
      if (typeof text !== 'string') {
        problems.push({ file, message: text.problem });
        continue;
      }
      source = text;
    } catch (error) {
      problems.push({ file, message: (error as Error).message });
      continue;
    }
    try {
      const input: unknown = JSON.parse(source);
      if (input === null || typeof input !== 'object' || Array.isArray(input)) problems.push({ file, message: 'an example must be a JSON object (the run input)' });
      else examples.push({ name: basename(name, '.json'), file, input: input as Record<string, unknown> });
    } catch (error) {
      problems.push({ file, ...jsonErrorLine(source, error), message: `not valid JSON: ${(error as Error).message}` });
    }
  }
  return { examples, problems };
}

/** Path of `file` relative to the working directory, for messages. */
export function displayPath(path: string): string {
  const shown = relative(process.cwd(), path);
  return shown === '' ? '.' : shown.startsWith('..') ? path : shown;
}

/** Adds the line where the runtime could name only the file: manifest paths, schema paths (ajv's `data/…`). */
function locateProblem(problem: KitPackageProblem, manifestSource: string, files: Record<string, string>): KitPackageProblem {
  if (problem.line !== undefined) return problem;
  if (problem.file === MANIFEST_FILE) return manifestProblem(manifestSource, problem.message);
  const source = files[problem.file];
  const pointer = /\bdata((?:\/[^\s/,]+)+)/.exec(problem.message);
  if (source === undefined || !pointer || !problem.file.endsWith('.json')) return problem;
  const line = lineOfPath(source, (pointer[1] as string).slice(1).split('/').map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment)));
  return line === undefined ? problem : { ...problem, line };
}

function lineOfPath(source: string, path: Array<string | number>): number | undefined {
  const document = parseDocument(source);
  for (let length = path.length; length > 0; length--) {
    const node = document.getIn(path.slice(0, length), true) as { range?: [number, number] } | undefined;
    const offset = node?.range?.[0];
    if (typeof offset === 'number') return lineAt(source, offset);
  }
  return undefined;
}

/** Manifest errors read `outputs[2].filename: must …`; find that node's line in kit.json. */
function manifestProblem(source: string, message: string): KitPackageProblem {
  const match = /^([A-Za-z_$][\w$]*(?:\.[\w$]+|\[\d+\])*): /.exec(message);
  if (!match) return { file: MANIFEST_FILE, message };
  const path = (match[1] as string).split(/\.|(?=\[)/).map((segment) => (segment.startsWith('[') ? Number(segment.slice(1, -1)) : segment));
  const line = lineOfPath(source, path);
  return line === undefined ? { file: MANIFEST_FILE, message } : { file: MANIFEST_FILE, line, message };
}

function jsonErrorLine(source: string, error: unknown): { line?: number } {
  const text = (error as Error).message ?? '';
  const line = /\(line (\d+) column \d+\)/.exec(text);
  if (line) return { line: Number(line[1]) };
  const position = /at position (\d+)/.exec(text);
  return position ? { line: lineAt(source, Number(position[1])) } : {};
}

function lineAt(source: string, offset: number): number {
  return source.slice(0, offset).split('\n').length;
}
