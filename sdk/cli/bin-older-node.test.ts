/**
 * The `specwright` bin run by a Node older than 24 (a CI image's default): it says so, with exit
 * code 1, and under --json still answers the one JSON line on stdout that a program waits for.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('./bin.mjs', import.meta.url));
// Node 20 as the bin sees it: its version, read before anything else runs.
const olderNode = 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.1.0"});Object.defineProperty(process,"version",{value:"v20.1.0"})';

async function runOnOlderNode(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', olderNode, bin, ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the specwright bin on a Node older than 24', () => {
  it('says which Node is needed, with exit code 1, and under --json prints that as one JSON line on stdout', async () => {
    const text = await runOnOlderNode(['kit', 'validate', 'some-kit']);
    expect(text).toEqual({ code: 1, stdout: '', stderr: 'specwright: Node.js 24 or newer is required (this is v20.1.0)\n' });
    const json = await runOnOlderNode(['kit', 'validate', 'some-kit', '--json']);
    expect(json.code).toBe(1);
    expect(json.stdout.split('\n')).toEqual([expect.any(String), '']);
    expect(JSON.parse(json.stdout)).toEqual({ ok: false, error: { code: 'NODE_VERSION', message: 'Node.js 24 or newer is required (this is v20.1.0)' } });
  });
});
