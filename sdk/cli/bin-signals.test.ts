/**
 * The `specwright` bin runs the command in a second Node process (the sandbox needs a flag set at
 * start). Stopped by a signal — Ctrl-C, a CI job cancelled — it must end as the command would alone:
 * by that signal, which a shell tells from a failure (a loop over kits stops on Ctrl-C instead of
 * going on to the next kit, as it does after exit code 1).
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliInProcess as cli } from './test-support/cli-in-process.ts';

let work: string;
let server: Server;
let port: number;
let requestArrived: () => void = () => {};
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'specwright-bin-signals-'));
  // A server that takes the upload and never answers: the command waits until it is stopped.
  server = createServer((req) => {
    req.resume();
    requestArrived();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await rm(work, { recursive: true, force: true });
});

describe('the specwright bin, stopped by a signal', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`ends by ${signal} itself, not with exit code 1 (a failed kit)`, async () => {
      const dir = join(work, `waits-${signal.toLowerCase()}`);
      expect((await cli(['kit', 'init', dir])).code).toBe(0);
      const arrived = new Promise<void>((resolve) => (requestArrived = resolve));
      const bin = join(import.meta.dirname, 'bin.mjs');
      const flags = ['--url', `http://127.0.0.1:${port}`, '--api-key', 'swk_prefix_secret', '--org', '00000000-0000-4000-8000-000000000000'];
      const command = spawn(process.execPath, [bin, 'kit', 'publish', dir, ...flags], { stdio: 'ignore' });
      const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => command.on('exit', (code, by) => resolve({ code, signal: by })));
      await arrived;
      command.kill(signal);
      expect(await ended).toEqual({ code: null, signal });
    });
  }
});
