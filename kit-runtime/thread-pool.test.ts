import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('the thread pool', () => {
  it('keeps a process alive while a thread works, and never after: a process that used it answers, then ends by itself', async () => {
    // Held open while the thread works (the answer arrives), let go once it is idle.
    const script = new URL('./test-support/validate-once-and-exit.ts', import.meta.url);
    const { stdout } = await run(process.execPath, ['--no-node-snapshot', script.pathname], { timeout: 20_000 });
    expect(stdout.trim()).toBe('warning');
  });
});
