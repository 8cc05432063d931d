import { describe, expect, it } from 'vitest';
import { BundleNames, safeKitPath, UnsafePathError } from './safe-path.ts';

describe('safeKitPath', () => {
  it('normalises harmless relative paths', () => {
    expect(safeKitPath('a/b.json')).toBe('a/b.json');
    expect(safeKitPath('./a//b/./c.md')).toBe('a/b/c.md');
    expect(safeKitPath('cafe\u0301.txt')).toBe('caf\u00e9.txt');
    expect(safeKitPath(`${'\u00e9'.repeat(125)}.txt`)).toBe(`${'\u00e9'.repeat(125)}.txt`);
    expect(safeKitPath(`a/${'x'.repeat(255)}`)).toBe(`a/${'x'.repeat(255)}`);
    // Measured once normalised: 300 bytes as decomposed text (as macOS writes it), 200 in NFC.
    expect(safeKitPath('e\u0301'.repeat(100))).toBe('\u00e9'.repeat(100));
    // Zero-width joiners are parts of words and emoji, not disguises.
    expect(safeKitPath('\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645.md')).toBe('\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645.md');
    expect(safeKitPath('\u{1F468}\u200D\u{1F469}\u200D\u{1F467}.md')).toBe('\u{1F468}\u200D\u{1F469}\u200D\u{1F467}.md');
    // Names that only begin like a device's.
    for (const name of ['console.md', 'com10.txt', 'auxiliary.md', 'conin.md', 'nul-results.json']) expect(safeKitPath(name)).toBe(name);
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
    ['COM\u00b9', 'reserved device name'],
    ['docs/lpt\u00b2.md', 'reserved device name'],
    ['CONIN$', 'reserved device name'],
    ['conout$.log', 'reserved device name'],
    ['aux .txt', 'reserved device name'],
    ['file.txt:stream', ': * ?'],
    ['trailing. ', 'ending in'],
    // Storage turns a lone surrogate into U+FFFD, so these two would be stored under one name.
    ['x\uD800.md', 'unpaired UTF-16 surrogates'],
    ['x\uDC00.md', 'unpaired UTF-16 surrogates'],
    // Each looks like "a.txt" in a file list.
    ['a\u200B.txt', 'invisible characters'],
    ['a\uFEFF.txt', 'invisible characters'],
    ['a\u00AD.txt', 'invisible characters'],
    ['a\u2028.txt', 'line separators'],
    ['a\u2060.txt', 'invisible characters'],
    ['a\u{E0041}.txt', 'invisible characters'],
    // 404 bytes of UTF-8 in 204 characters: unzip and Python refuse the name on Linux.
    [`${'\u00e9'.repeat(200)}.txt`, 'at most 255 bytes in UTF-8'],
    [`dir/${'x'.repeat(256)}`, 'at most 255 bytes in UTF-8'],
    // 255 bytes as sent, 510 once normalised (NFC decomposes U+0958 into two characters).
    ['\u0958'.repeat(85), 'at most 255 bytes in UTF-8'],
  ])('rejects %j', (path, reason) => {
    expect(() => safeKitPath(path)).toThrow(UnsafePathError);
    expect(() => safeKitPath(path)).toThrow(reason);
  });

  it('never echoes control characters in its message', () => {
    // Asserted outside any catch, so a path that stopped being refused fails here too.
    expect(() => safeKitPath('x\u0000y')).toThrow(UnsafePathError);
    const message = (() => {
      try {
        return safeKitPath('x\u0000y');
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toBe('unsafe path "x\\u0000y": must not contain NUL or other control characters');
  });

  // Each reorders how a name is shown: "evil\u202Egpj.md" reads as "evildm.jpg", a spoofed extension.
  it.each(['202A', '202B', '202C', '202D', '202E', '2066', '2067', '2068', '2069', '200E', '200F', '061C'])(
    'rejects the bidirectional control U+%s',
    (hex) => {
      const path = `docs/evil${String.fromCharCode(Number.parseInt(hex, 16))}gpj.md`;
      expect(() => safeKitPath(path)).toThrow(UnsafePathError);
      expect(() => safeKitPath(path)).toThrow('must not contain Unicode bidirectional controls');
    },
  );

  it('never echoes bidirectional controls in its message', () => {
    expect(() => safeKitPath('evil\u202Egpj.md')).toThrow('unsafe path "evil\\u202egpj.md": must not contain Unicode bidirectional controls');
  });

  it('keeps right-to-left text that carries no control', () => {
    expect(safeKitPath('docs/\u05e9\u05dc\u05d5\u05dd.md')).toBe('docs/\u05e9\u05dc\u05d5\u05dd.md');
  });
});

describe('BundleNames', () => {
  const names = () => {
    const set = new BundleNames();
    set.reserve('manifest.json', 'the bundle manifest');
    set.add('docs/guide.md', 'output "guide"');
    set.add('README.md', 'output "readme"');
    return set;
  };

  it('accepts names that unpack side by side on every file system', () => {
    for (const name of ['docs/api.md', 'Docs/other.md', 'README.txt', 'docs-guide.md', 'sub/manifest.json', 'x\u00e9.md']) {
      expect(names().problem(name), name).toBeNull();
    }
  });

  it.each([
    ['README.md', 'filename "README.md" is already used by output "readme"'],
    ['readme.MD', 'filename "readme.MD" differs only in letter case from "README.md", used by output "readme"'],
    ['DOCS/Guide.md', 'filename "DOCS/Guide.md" differs only in letter case from "docs/guide.md", used by output "guide"'],
    ['manifest.json', 'filename "manifest.json" is reserved for the bundle manifest'],
    ['MANIFEST.JSON', 'filename "MANIFEST.JSON" differs only in letter case from "manifest.json", reserved for the bundle manifest'],
    ['docs', 'filename "docs" is a directory of "docs/guide.md", used by output "guide"'],
    ['Docs', 'filename "Docs" is a directory of "docs/guide.md", used by output "guide"'],
    ['README.md/x.md', 'filename "README.md/x.md" needs a directory "README.md", but "README.md" is a file used by output "readme"'],
    ['docs/guide.md/x', 'filename "docs/guide.md/x" needs a directory "docs/guide.md", but "docs/guide.md" is a file used by output "guide"'],
    ['Manifest.json/x.md', 'filename "Manifest.json/x.md" needs a directory "Manifest.json", but "manifest.json" is a file reserved for the bundle manifest'],
  ])('refuses %j', (name, message) => {
    expect(names().problem(name)).toBe(message);
  });
});
