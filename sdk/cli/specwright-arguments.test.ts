/**
 * Arguments a person or a script gets slightly wrong: a key assignment written after the command
 * instead of before it, --help among --json, an option whose variable is unset.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliInProcess as cli } from './test-support/cli-in-process.ts';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'specwright-arguments-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('an API key assignment written after the command', () => {
  it('is refused without showing the key, in text and in --json (`kit publish dir SPECWRIGHT_API_KEY=swk_…`)', async () => {
    const dir = join(work, 'assigned-key');
    for (const pasted of ['SPECWRIGHT_API_KEY=swk_abcdef_aVerySecretPart', 'X-API-Key: swk_abcdef_aVerySecretPart']) {
      const text = await cli(['kit', 'publish', dir, pasted]);
      expect(text).toMatchObject({ code: 2, out: [], err: ['specwright: an extra argument looks like an API key (not shown); pass the key with --api-key or SPECWRIGHT_API_KEY', 'Run "specwright kit --help" for usage.'] });
      const json = await cli(['kit', 'publish', dir, pasted, '--json']);
      expect(json.code).toBe(2);
      expect(json.out).toHaveLength(1);
      expect(JSON.parse(json.out[0] as string)).toMatchObject({ ok: false, error: { code: 'USAGE' } });
      for (const result of [text, json]) expect([...result.out, ...result.err].join('\n')).not.toContain('aVerySecret');
    }
    // A path that merely contains the letters is still a path.
    expect((await cli(['kit', 'validate', join(work, 'tools/swk_kits')])).err[0]).toMatch(/no kit\.json in/);
  });
});

describe('--help with --json', () => {
  it('answers one JSON line on stdout, as every other outcome does', async () => {
    const result = await cli(['kit', 'validate', '--help', '--json']);
    expect(result.code).toBe(0);
    expect(result.out).toHaveLength(1);
    const answer = JSON.parse(result.out[0] as string);
    expect(answer).toMatchObject({ ok: true });
    expect(answer.usage).toMatch(/^Usage: specwright kit <command> <dir>/);
    expect((await cli(['--help'])).out[0]).toMatch(/^Usage: specwright kit/);
  });
});

describe('--kits given an empty value (an unset variable)', () => {
  it('is a usage error, as an empty kit directory is, not a search of the current directory', async () => {
    const dir = join(work, 'composite-elsewhere');
    expect((await cli(['kit', 'init', dir])).code).toBe(0);
    const result = await cli(['kit', 'test', dir, '--kits', '']);
    expect(result).toMatchObject({ code: 2, out: [], err: ['specwright: --kits needs a directory', 'Run "specwright kit --help" for usage.'] });
  });
});
