import { describe, expect, it } from 'vitest';
import { safeKitPath, UnsafePathError } from './safe-path.ts';

describe('safeKitPath', () => {
  it('normalises harmless relative paths', () => {
    expect(safeKitPath('a/b.json')).toBe('a/b.json');
    expect(safeKitPath('./a//b/./c.md')).toBe('a/b/c.md');
    expect(safeKitPath('cafe\u0301.txt')).toBe('caf\u00e9.txt');
  });

  it.each([
    ['../x', '".." segments'],
    ['a/../../x', '".." segments'],
    ['..\\x', 'not "\\"'],
    ['a\\..\\..\\x', 'not "\\"'],
    ['/etc/passwd', 'not absolute'],
    ['C:/Windows/x', 'drive path'],
    ['a\u0000.txt', 'NUL'],
    ['a/\n.txt', 'control characters'],
    ['', 'empty'],
    ['dir/', 'not a directory'],
    ['...', 'dot-only'],
    ['a/nul.txt', 'reserved device name'],
    ['file.txt:stream', ': * ?'],
    ['trailing. ', 'ending in'],
  ])('rejects %j', (path, reason) => {
    expect(() => safeKitPath(path)).toThrow(UnsafePathError);
    expect(() => safeKitPath(path)).toThrow(reason);
  });

  it('never echoes control characters in its message', () => {
    try {
      safeKitPath('x\u0000y');
    } catch (error) {
      expect((error as Error).message).not.toContain('\u0000');
      expect((error as Error).message).toContain('"x\\u0000y"');
    }
  });
});
