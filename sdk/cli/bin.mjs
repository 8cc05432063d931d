#!/usr/bin/env node
// The `specwright` command. The kit sandbox (isolated-vm) needs Node 24 started with
// --no-node-snapshot, which cannot be switched on from inside a running process, so this shim
// starts Node again with the flag and the TypeScript entry point, and passes the exit code on.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  const message = `Node.js 24 or newer is required (this is ${process.version})`;
  process.stderr.write(`specwright: ${message}\n`);
  // --json promises one JSON object on stdout whatever the outcome: a program run by an older Node reads this one too.
  if (process.argv.slice(2).includes('--json')) process.stdout.write(`${JSON.stringify({ ok: false, error: { code: 'NODE_VERSION', message } })}\n`);
  // Not process.exit(): on a pipe (a program reading --json) that could drop the line just written.
  process.exitCode = 1;
} else {
  start();
}

/** Node again, with the flag, running the command; its exit (or the signal that ended it) is this process's. */
function start() {
  const entry = fileURLToPath(new URL('./specwright.ts', import.meta.url));
  const child = spawn(process.execPath, ['--no-node-snapshot', '--no-warnings', entry, ...process.argv.slice(2)], { stdio: 'inherit' });
  const forwarded = ['SIGINT', 'SIGTERM'];
  for (const signal of forwarded) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    // Ended by a signal (Ctrl-C, SIGTERM): end by the same one, as the command would have run alone.
    // An exit code of 1 would read as "the kit failed", and a shell loop over kits would go on to the
    // next one instead of stopping on Ctrl-C.
    for (const name of forwarded) process.removeAllListeners(name);
    // What a shell reports for it, should this process outlive the signal (one whose default is to be ignored).
    process.exitCode = 128 + (constants.signals[signal] ?? 0);
    process.kill(process.pid, signal);
  });
}
