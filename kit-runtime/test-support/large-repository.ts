import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestGitServer } from './git-http-server.ts';

/**
 * Creates `name` on the test git server with one commit on `main` of random files of `fileBytes`
 * each: random, so the pack cannot compress them and a clone streams that many bytes.
 */
export async function seedLargeRepository(git: TestGitServer, name: string, token: string, fileBytes: number[]): Promise<void> {
  await git.createRepository(name);
  const work = await mkdtemp(join(tmpdir(), 'specwright-git-source-'));
  const run = (...args: string[]) => promisify(execFile)('git', ['-c', 'user.name=Seed', '-c', 'user.email=seed@test.invalid', ...args], { cwd: work });
  try {
    await run('init', '--quiet', '--initial-branch=main');
    for (const [index, bytes] of fileBytes.entries()) await writeFile(join(work, `big${index}.bin`), randomBytes(bytes));
    await run('add', '.');
    await run('commit', '--quiet', '-m', 'seed');
    await run('push', '--quiet', git.url(name).replace('http://', `http://kit:${token}@`), 'main');
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * An HTTP relay to the git server at `target` that tells the test how a clone's pack (the
 * upload-pack answer) passes through it: each chunk (`onPackBytes`, with the bytes so far), and its
 * end (`onPackSent`). The callbacks are read at each event, so a test may swap them.
 */
export async function startPackRelay(target: URL, listener: { onPackBytes?: (total: number) => void; onPackSent?: () => void }) {
  const server = createServer((req, res) => {
    const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (!req.url?.endsWith('/git-upload-pack')) return void answer.pipe(res);
      let total = 0;
      answer.on('data', (chunk: Buffer) => {
        total += chunk.length;
        res.write(chunk);
        listener.onPackBytes?.(total);
      });
      answer.on('end', () => {
        res.end();
        listener.onPackSent?.();
      });
    });
    req.pipe(upstream);
    res.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
