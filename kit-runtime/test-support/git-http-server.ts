/**
 * A real git server on loopback for tests: the system's `git http-backend` (smart HTTP, CGI) behind
 * a tiny node http server that demands a token (Basic password or Bearer), over bare repositories
 * in a temporary directory. `git(…)` runs git commands against a served repository to check results.
 * `holdNext(…)` stalls a request at a point the test releases, as a slow server would.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type TestGitServer = {
  /** `http://127.0.0.1:<port>/<name>.git` */
  url(name: string): string;
  createRepository(name: string, options?: { initialCommit?: boolean }): Promise<void>;
  /** Runs `git <args>` in the bare repository and returns stdout, trimmed. */
  git(name: string, ...args: string[]): Promise<string>;
  /** Requests seen, for asserting that a dry run made none. */
  readonly requests: Array<{ method: string; path: string; authorized: boolean }>;
  /**
   * Holds the next authorized request `matches` picks before git sees it, until `release()`;
   * `reached` resolves when it arrives. Released, it is served as any other, even to a client gone.
   */
  holdNext(matches: (request: { method: string; path: string }) => boolean): HeldRequest;
  close(): Promise<void>;
};

export type HeldRequest = { reached: Promise<void>; release(): void };

export async function startTestGitServer(options: { token: string; username?: string }): Promise<TestGitServer> {
  const root = await mkdtemp(join(tmpdir(), 'specwright-git-server-'));
  const requests: TestGitServer['requests'] = [];
  const holds: Array<{ matches: (request: { method: string; path: string }) => boolean; arrived: () => void; released: Promise<void> }> = [];
  const server = createServer((req, res) => {
    const authorized = isAuthorized(req, options.token);
    const request = { method: req.method ?? 'GET', path: req.url ?? '/' };
    requests.push({ ...request, authorized });
    if (!authorized) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="test"', 'Content-Type': 'text/plain' }).end('unauthorized\n');
      return;
    }
    const hold = holds.find((candidate) => candidate.matches(request));
    if (hold === undefined) return serveWithHttpBackend(root, req, res);
    holds.splice(holds.indexOf(hold), 1);
    hold.arrived();
    void hold.released.then(() => serveWithHttpBackend(root, req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const repoPath = (name: string) => join(root, `${name}.git`);
  const gitIn = async (name: string, ...args: string[]) => (await run('git', args, { cwd: repoPath(name) })).stdout.trim();

  return {
    url: (name) => `http://127.0.0.1:${port}/${name}.git`,
    requests,
    holdNext(matches) {
      const reached = Promise.withResolvers<void>();
      const released = Promise.withResolvers<void>();
      holds.push({ matches, arrived: reached.resolve, released: released.promise });
      return { reached: reached.promise, release: released.resolve };
    },
    git: gitIn,
    async createRepository(name, repositoryOptions = {}) {
      await run('git', ['init', '--quiet', '--bare', '--initial-branch=main', repoPath(name)]);
      await gitIn(name, 'config', 'http.receivepack', 'true');
      if (!repositoryOptions.initialCommit) return;
      // A first commit holding README.md, made without a working tree.
      const blob = (await run('sh', ['-c', 'printf "# seed\\n" | git hash-object -w --stdin'], { cwd: repoPath(name) })).stdout.trim();
      const tree = (await run('sh', ['-c', `printf "100644 blob ${blob}\\tREADME.md\\n" | git mktree`], { cwd: repoPath(name) })).stdout.trim();
      const env = { ...process.env, GIT_AUTHOR_NAME: 'Seed', GIT_AUTHOR_EMAIL: 'seed@test.invalid', GIT_COMMITTER_NAME: 'Seed', GIT_COMMITTER_EMAIL: 'seed@test.invalid' };
      const commit = (await run('git', ['commit-tree', tree, '-m', 'seed'], { cwd: repoPath(name), env })).stdout.trim();
      await gitIn(name, 'update-ref', 'refs/heads/main', commit);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}

function isAuthorized(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  if (header === `Bearer ${token}`) return true;
  if (!header.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  return decoded.slice(decoded.indexOf(':') + 1) === token;
}

/** CGI: request line and headers as environment, body on stdin, "Status:" and headers back. */
function serveWithHttpBackend(root: string, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const child = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REMOTE_USER: 'kit',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
    },
  });
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) return;
    headersDone = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  child.on('close', () => {
    if (!headersDone) res.writeHead(502).end();
    else res.end();
  });
  child.on('error', () => {
    if (!res.headersSent) res.writeHead(500).end();
  });
}
