import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

describe('the project', () => {
  it('type-checks under strict TypeScript', async () => {
    // The exit code catches a tsc that never checked anything (it crashed, out of memory, with nothing on stdout).
    const result = await promisify(execFile)('npx', ['tsc', '--noEmit', '-p', 'tsconfig.json'], { cwd: process.cwd() }).then((done) => ({ ...done, code: 0 }), (error) => error);
    expect(result.stdout).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);
});
