import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

describe('the project', () => {
  it('type-checks under strict TypeScript', async () => {
    const result = await promisify(execFile)('npx', ['tsc', '--noEmit', '-p', 'tsconfig.json'], { cwd: process.cwd() }).catch((error) => error);
    expect(result.stdout).toBe('');
  }, 120_000);
});
