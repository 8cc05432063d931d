import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** checksumOf for one package, computed by a Node process whose environment names `locale`. */
function checksumUnder(locale: string): string {
  const script = `
    import { checksumOf } from './control-plane/domains/kits/kit-publication.ts';
    console.log(checksumOf({ metadata: { id: 'k' } }, { 'z.txt': 'z', 'ä.txt': 'ä', 'a.txt': 'a', 'B.txt': 'B' }));`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('LC_')));
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...env, LANG: locale }, encoding: 'utf8' }).trim();
}

describe('a published package checksum', () => {
  it('is the same on servers in different locales (it followed LANG: ä sorts after z in Swedish)', () => {
    expect(checksumUnder('sv_SE.UTF-8')).toMatch(/^[0-9a-f]{64}$/);
    expect(checksumUnder('sv_SE.UTF-8')).toBe(checksumUnder('en_US.UTF-8'));
  });
});
