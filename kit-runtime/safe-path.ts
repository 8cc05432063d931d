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
const MAX_SEGMENT_LENGTH = 255;
// Characters that change meaning on some filesystem or shell: drive/ADS separators, wildcards,
// redirections. Control characters (NUL included) are rejected separately.
const FORBIDDEN_CHARACTERS = /[:*?"<>|]/;
// Device names Windows resolves regardless of directory or extension.
const WINDOWS_DEVICE_NAME = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;

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
  if (path.includes('\\')) return 'must use "/" as separator, not "\\"';
  if (path.startsWith('/')) return 'must be relative, not absolute';
  if (/^[a-zA-Z]:/.test(path)) return 'must be relative, not a drive path';
  if (FORBIDDEN_CHARACTERS.test(path)) return 'must not contain any of : * ? " < > |';
  if (path.endsWith('/')) return 'must name a file, not a directory';
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') return 'must not contain ".." segments';
    if (/^\.+$/.test(segment)) return 'must not contain dot-only segments';
    if (/[. ]$/.test(segment)) return 'must not have a segment ending in "." or " "';
    if (segment.length > MAX_SEGMENT_LENGTH) return `segments must be at most ${MAX_SEGMENT_LENGTH} characters`;
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
  const normalized = (path as string)
    .normalize('NFC')
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
  if (normalized === '') throw new UnsafePathError(`unsafe path ${describePath(path)}: must name a file`);
  return normalized;
}

/** JSON-quoted and truncated, so NUL bytes or megabytes of path never reach a log line verbatim. */
export function describePath(path: unknown): string {
  if (typeof path !== 'string') return `(${typeof path})`;
  const shown = path.length > 80 ? `${path.slice(0, 80)}…` : path;
  return JSON.stringify(shown);
}
