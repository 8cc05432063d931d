/**
 * The one gate every kit-supplied path goes through: manifest references, rendered output
 * filenames and ZIP entry names. A kit is tenant-authored data, so a path from it must never name
 * anything outside the kit (or, in a bundle, outside the archive root) on any platform that might
 * later unpack it — hence the Windows rules (backslashes, drive letters, trailing dots) on Linux too.
 */

export class UnsafePathError extends Error {
  override name = 'UnsafePathError';
}

const MAX_PATH_LENGTH = 1024;
const MAX_SEGMENT_BYTES = 255;
// Characters that change meaning on some filesystem or shell: drive/ADS separators, wildcards,
// redirections. Control characters (NUL included) are rejected separately.
const FORBIDDEN_CHARACTERS = /[:*?"<>|]/;
// Device names Windows resolves regardless of directory or extension (spaces before it ignored):
// COM and LPT take the superscript digits ¹ ² ³ too, and the console has CONIN$ and CONOUT$.
const WINDOWS_DEVICE_NAME = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$) *(\..*)?$/i;
// Bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) reorder how a name
// is displayed, so "evil\u202Egpj.md" shows as "evildm.jpg" in a file list: a spoofed extension.
const BIDI_CONTROL = /\p{Bidi_Control}/u;
const BIDI_CONTROLS = /\p{Bidi_Control}/gu;
// Characters that show as nothing — zero-width space U+200B, word joiner U+2060, U+FEFF, soft
// hyphen U+00AD, Mongolian vowel separator U+180E, invisible operators U+2061–U+2064, tag characters
// — and the line and paragraph separators: "a\u200B.txt" sits beside "a.txt" looking exactly like it.
// (The zero-width joiners U+200C/U+200D stay allowed: Persian and Indic words and emoji need them.)
const INVISIBLE = /[\u00AD\u180E\u200B\u2060-\u2064\uFEFF\u2028\u2029\u{E0000}-\u{E007F}]/u;

function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** Why a path is unsafe, or null when it is fine. Messages never echo control characters. */
export function explainUnsafePath(path: unknown): string | null {
  if (typeof path !== 'string') return 'must be a string';
  if (path.length === 0) return 'must not be empty';
  if (path.length > MAX_PATH_LENGTH) return `must be at most ${MAX_PATH_LENGTH} characters`;
  if (hasControlCharacter(path)) return 'must not contain NUL or other control characters';
  if (BIDI_CONTROL.test(path)) return 'must not contain Unicode bidirectional controls (such as U+202E)';
  if (INVISIBLE.test(path)) return 'must not contain invisible characters (such as U+200B) or line separators';
  // Storage would turn each into U+FFFD, so two different names could be stored as one.
  if (!path.isWellFormed()) return 'must not contain unpaired UTF-16 surrogates';
  if (path.includes('\\')) return 'must use "/" as separator, not "\\"';
  if (path.startsWith('/')) return 'must be relative, not absolute';
  if (/^[a-zA-Z]:/.test(path)) return 'must be relative, not a drive path';
  if (FORBIDDEN_CHARACTERS.test(path)) return 'must not contain any of : * ? " < > |';
  if (path.endsWith('/')) return 'must name a file, not a directory';
  // Segments are measured as they will be stored (NFC, see safeKitPath).
  for (const segment of path.normalize('NFC').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') return 'must not contain ".." segments';
    if (/^\.+$/.test(segment)) return 'must not contain dot-only segments';
    if (/[. ]$/.test(segment)) return 'must not have a segment ending in "." or " "';
    // File systems count a name's bytes (ext4, APFS: 255 bytes of UTF-8), so 200 × "é" is too long.
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) return `segments must be at most ${MAX_SEGMENT_BYTES} bytes in UTF-8`;
    if (WINDOWS_DEVICE_NAME.test(segment)) return `must not use the reserved device name "${segment}"`;
  }
  return null;
}

/**
 * Normalises a kit-relative path ("./a//b.json" -> "a/b.json", Unicode NFC) or throws
 * UnsafePathError. Rejecting rather than repairing ".." keeps the rule simple to reason about:
 * nothing a kit writes can ever resolve outside its root.
 */
export function safeKitPath(path: unknown): string {
  const problem = explainUnsafePath(path);
  if (problem !== null) throw new UnsafePathError(`unsafe path ${describePath(path)}: ${problem}`);
  const normalized = normalizedSegments(path as string);
  if (normalized === '') throw new UnsafePathError(`unsafe path ${describePath(path)}: must name a file`);
  return normalized;
}

/**
 * Why `path` is no safe folder, or null: a file path's rules, except that a folder may end in "/"
 * ("specs/") and may be the root itself (".", "./").
 */
export function explainUnsafeFolder(path: unknown): string | null {
  // "/" alone stays as it is, and is refused as absolute.
  return explainUnsafePath(typeof path === 'string' ? path.replace(/(?<=[^/])\/+$/, '') : path);
}

/** Normalises a kit-relative folder as safeKitPath does a file ("./specs/" -> "specs"); the root is "". */
export function safeKitFolder(path: unknown): string {
  const problem = explainUnsafeFolder(path);
  if (problem !== null) throw new UnsafePathError(`unsafe folder ${describePath(path)}: ${problem}`);
  return normalizedSegments(path as string);
}

function normalizedSegments(path: string): string {
  return path
    .normalize('NFC')
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

/**
 * JSON-quoted and truncated, so NUL bytes or megabytes of path never reach a log line verbatim.
 * Bidirectional controls are escaped too (JSON leaves them as they are): echoed, they would reorder
 * the message that reports them.
 */
export function describePath(path: unknown): string {
  if (typeof path !== 'string') return `(${typeof path})`;
  const shown = path.length > 80 ? `${path.slice(0, 80)}…` : path;
  return JSON.stringify(shown).replace(BIDI_CONTROLS, (control) => `\\u${control.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

type NameEntry = { name: string; owner: string; reserved: boolean; isFile: boolean; file: string };

/**
 * The file names of one bundle, compared the way the file systems that unpack it compare them: a
 * ZIP is as likely to be extracted on a case-insensitive file system (Windows, macOS) as on Linux,
 * and no file system holds a file and a directory of the same name. A name is refused when it
 * equals an earlier one, differs from one only in letter case, or is a file where an earlier name
 * needs a directory (or the reverse), so every bundle unpacks side by side, everywhere.
 * Names are expected normalised (`safeKitPath`).
 */
export class BundleNames {
  readonly #entries = new Map<string, NameEntry>();

  /** `owner` says who holds the name in messages: `output "readme"`, `the bundle manifest`. */
  reserve(name: string, owner: string): void {
    this.#record(name, owner, true);
  }

  add(name: string, owner: string): void {
    this.#record(name, owner, false);
  }

  /** Why `name` cannot join the names so far, or null. */
  problem(name: string): string | null {
    const same = this.#entries.get(foldCase(name));
    if (same?.isFile) {
      if (same.name === name) return same.reserved ? `filename "${name}" is ${heldBy(same)}` : `filename "${name}" is already ${heldBy(same)}`;
      return `filename "${name}" differs only in letter case from "${same.name}", ${heldBy(same)}`;
    }
    if (same) return `filename "${name}" is a directory of "${same.file}", ${heldBy(same)}`;
    const segments = name.split('/');
    for (let end = 1; end < segments.length; end++) {
      const directory = segments.slice(0, end).join('/');
      const file = this.#entries.get(foldCase(directory));
      if (file?.isFile) return `filename "${name}" needs a directory "${directory}", but "${file.name}" is a file ${heldBy(file)}`;
    }
    return null;
  }

  #record(name: string, owner: string, reserved: boolean): void {
    this.#entries.set(foldCase(name), { name, owner, reserved, isFile: true, file: name });
    const segments = name.split('/');
    for (let end = 1; end < segments.length; end++) {
      const directory = segments.slice(0, end).join('/');
      const key = foldCase(directory);
      if (!this.#entries.has(key)) this.#entries.set(key, { name: directory, owner, reserved, isFile: false, file: name });
    }
  }
}

function heldBy(entry: NameEntry): string {
  return `${entry.reserved ? 'reserved for' : 'used by'} ${entry.owner}`;
}

/** Both mappings, so pairs like "ß"/"SS" or "ſ"/"s" that some file system folds together count as one. */
function foldCase(name: string): string {
  return name.toUpperCase().toLowerCase();
}
