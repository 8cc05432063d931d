#!/usr/bin/env node
// The `specwright` command. The kit sandbox (isolated-vm) needs Node 24 started with
// --no-node-snapshot, which cannot be switched on from inside a running process, so this shim
// starts Node again with the flag and the TypeScript entry point, and passes the exit code on.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`specwright: Node.js 24 or newer is required (this is ${process.version})\n`);
  process.exit(1);
}
const entry = fileURLToPath(new URL('./specwright.ts', import.meta.url));
const child = spawn(process.execPath, ['--no-node-snapshot', '--no-warnings', entry, ...process.argv.slice(2)], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
