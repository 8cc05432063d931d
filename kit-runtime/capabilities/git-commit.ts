/**
 * Host capabilities that let a platform kit publish files to a git repository over smart HTTP(S):
 * `kit.gitCommit` (APPLY) commits files onto a branch and pushes; `kit.gitVerify` (VERIFY) checks
 * that the branch holds that commit with those files. isomorphic-git does the git work in pure
 * JavaScript in a temporary directory, so a worker needs no git binary.
 *
 * The hook names a credential by id (`credential: "git-token"`); the host opens it through the
 * caller's opener, so the secret never enters the isolate, and every message this file produces is
 * scrubbed of it. Remotes go through a policy (git-remote-policy.ts: public https addresses by
 * default, or an allow-list): a kit chooses the URL, so without it a kit could make the worker call
 * internal services. And a credential names the
 * repository it may be sent to (`repository` inside the sealed value, set by whoever stored it):
 * whoever runs the kit chooses the URL too, and must not be able to send the token elsewhere.
 *
 * Each call stops when its signal aborts (its phase or run is over: a time limit, a cancelled run):
 * every request is made with the signal and none starts after it, the push included, so a run
 * reported failed does not publish a commit afterwards.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git, { type HttpClient } from 'isomorphic-git';
import { HostCapabilityError } from '../errors.ts';
import type { HostCall, HostCapability } from '../sandbox/host-bridge.ts';
import { explainUnsafeFolder, explainUnsafePath, safeKitFolder, safeKitPath } from '../safe-path.ts';
import { createSecretRedactor } from '../secret-redactor.ts';
import { gitHttpClient, isPublicHttpsRemote, NonPublicAddressError, withoutTrailing } from './git-remote-policy.ts';
import { checkWorkTreeTargets, namesGitDirectory, refuseFileFolderClashes, writeWorkTreeFile } from './git-work-tree.ts';

export { isPublicHttpsRemote } from './git-remote-policy.ts';

export type GitCredentialOpener = (credentialId: string) => Promise<Record<string, unknown> | null>;

export type GitCapabilitiesOptions = {
  /** Opens a stored credential by id; give the same opener as the run's `openCredential`. */
  openCredential?: GitCredentialOpener;
  /** Which remotes kits may reach; default: `isPublicHttpsRemote` (public https addresses, checked again as each connection is made). */
  isAllowedRemote?: (url: URL) => boolean;
  /** Commit author when the kit names none. */
  author?: { name: string; email: string };
  /** Parent of the temporary working directories (default: the OS temp directory). */
  workRoot?: string;
};

export type GitFile = { path: string; content: string };
export type GitCommitArgument = {
  repository: string;
  branch?: string;
  /** Folder inside the repository the files go to; the repository root when absent. */
  directory?: string;
  message: string;
  files: GitFile[];
  credential?: string;
  author?: { name: string; email: string };
};
export type GitCommitResult = { commit: string; parent: string | null; branch: string; changed: boolean; files: number };
export type GitVerifyArgument = Omit<GitCommitArgument, 'message' | 'author' | 'files'> & { commit: string; files?: GitFile[] };
export type GitVerifyResult = { onBranch: boolean; head: string | null; missing: string[]; different: string[] };

const DEFAULT_AUTHOR = { name: 'Specwright', email: 'kits@specwright.invalid' };
const COMMIT = /^[0-9a-f]{40}$/;
const MAX_FILES = 500;
const VERIFY_HISTORY_DEPTH = 50;

export function createGitCapabilities(options: GitCapabilitiesOptions = {}): { gitCommit: HostCapability; gitVerify: HostCapability } {
  return {
    gitCommit: { phases: ['APPLY'], call: (argument, call) => withScrubbedErrors(options, argument, call, commitFiles) },
    gitVerify: { phases: ['VERIFY'], call: (argument, call) => withScrubbedErrors(options, argument, call, verifyCommit) },
  };
}

type Remote = {
  url: string;
  origin: string;
  branch: string;
  directory: string;
  headers: Record<string, string>;
  token: string | null;
  credential: string | null;
  http: HttpClient;
  signal: AbortSignal;
};
type Operation<R> = (remote: Remote, argument: Record<string, unknown>, options: GitCapabilitiesOptions, dir: string) => Promise<R>;

async function withScrubbedErrors<R>(options: GitCapabilitiesOptions, argument: unknown, { signal }: HostCall, operation: Operation<R>): Promise<R> {
  if (argument === null || typeof argument !== 'object' || Array.isArray(argument)) throw new HostCapabilityError('expected an object argument');
  stopIfAborted(signal);
  const remote = await resolveRemote(options, argument as Record<string, unknown>, signal);
  // Messages quote what the server answered (a push's refusal, a line it should not have sent). The
  // run's redactor knows nothing of a hostOnly credential, so they are scrubbed of the token here,
  // in every form the redactor knows (raw, inside a Basic header's base64, percent-encoded …).
  const scrubber = createSecretRedactor();
  scrubber.remember([remote.token, ...Object.values(remote.headers).flatMap((header) => [header, header.replace(/^\S+\s+/, '')])]);
  const dir = await mkdtemp(join(options.workRoot ?? tmpdir(), 'specwright-git-'));
  try {
    return await operation(remote, argument as Record<string, unknown>, options, dir);
  } catch (error) {
    // Whatever failed once the signal aborted failed because of it (a destroyed request).
    stopIfAborted(signal);
    const message = error instanceof HostCapabilityError ? error.message : describeGitError(error, remote);
    throw new HostCapabilityError(scrubber.redact(message));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The call's phase or run is over: nothing more is started, and the hook (if it still runs) is told so. */
function stopIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new HostCapabilityError('the git operation was stopped: its phase or run ended first');
}

async function resolveRemote(options: GitCapabilitiesOptions, argument: Record<string, unknown>, signal: AbortSignal): Promise<Remote> {
  let url: URL;
  try {
    url = new URL(String(argument.repository));
  } catch {
    throw new HostCapabilityError('repository must be an http(s) URL');
  }
  if (url.username !== '' || url.password !== '') throw new HostCapabilityError('repository URL must not contain credentials; name a stored credential instead');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new HostCapabilityError('repository must be an http(s) URL');
  const allowed = options.isAllowedRemote ?? isPublicHttpsRemote;
  if (!allowed(url)) throw new HostCapabilityError(`repository ${url.origin} is not an allowed git remote`);
  const branch = argument.branch === undefined ? 'main' : String(argument.branch);
  const branchProblem = explainInvalidBranch(branch);
  if (branchProblem !== null) throw new HostCapabilityError(`branch ${JSON.stringify(branch.slice(0, 200))} is not a valid branch name: ${branchProblem}`);
  let directory = '';
  if (argument.directory !== undefined && argument.directory !== '') {
    // A folder: "specs/" and "./specs" name specs, "." the repository's root.
    const problem = explainUnsafeFolder(argument.directory);
    if (problem !== null) throw new HostCapabilityError(`directory ${problem}`);
    directory = safeKitFolder(argument.directory);
    // Files under .git would rewrite the clone's config, and with it where the credential is pushed.
    if (directory.split('/').some(namesGitDirectory)) throw new HostCapabilityError('directory must not be .git or lie inside it');
  }
  const credential = argument.credential === undefined ? null : String(argument.credential);
  // The default policy is enforced again where connections are made; an allow-list names hosts itself.
  const http = gitHttpClient({ publicAddressesOnly: allowed === isPublicHttpsRemote, signal });
  return { url: url.href, origin: url.origin, branch, directory, ...(await authHeaders(options, credential, url)), credential, http, signal };
}

/**
 * Why git would refuse `branch` as refs/heads/<branch> (git check-ref-format, and `git branch` for
 * HEAD and a leading "-"), or null. Only characters no rule trips on are taken (so no control
 * characters, space, ~ ^ : ? * [ \ or @{). Every platform kit's push comes through here, so this is
 * the one gate: refused before any request, a bad name gets this message instead of a failed push.
 * git-publish's CHECK mirrors the rules and messages (kits/git-publish/hooks/check.js), so its dry
 * run refuses what APPLY would.
 */
function explainInvalidBranch(branch: string): string | null {
  if (branch === 'HEAD' || branch === '@') return `it cannot be ${JSON.stringify(branch)}`;
  if (!/^[A-Za-z0-9._/-]{1,200}$/.test(branch)) return 'use 1 to 200 letters, digits, ".", "_", "/" and "-"';
  if (branch.startsWith('-')) return 'it cannot start with "-"';
  if (branch.includes('..')) return 'it cannot contain ".."';
  if (branch.startsWith('/') || branch.endsWith('/') || branch.includes('//')) return 'it cannot start or end with "/" or contain "//"';
  if (branch.endsWith('.')) return 'it cannot end with "."';
  const bad = branch.split('/').find((part) => part.startsWith('.') || part.endsWith('.lock'));
  if (bad !== undefined) return `no part may start with "." or end with ".lock" (${JSON.stringify(bad)})`;
  return null;
}

async function authHeaders(options: GitCapabilitiesOptions, credentialId: string | null, url: URL): Promise<{ headers: Record<string, string>; token: string | null }> {
  if (credentialId === null) return { headers: {}, token: null };
  let secret: Record<string, unknown> | null = null;
  try {
    secret = options.openCredential ? await options.openCredential(credentialId) : null;
  } catch {
    throw new HostCapabilityError(`credential "${credentialId}" could not be opened`);
  }
  const token = secret?.token;
  if (typeof token !== 'string' || token === '') throw new HostCapabilityError(`credential "${credentialId}" is not configured or has no token`);
  if (typeof secret?.repository !== 'string') throw new HostCapabilityError(`credential "${credentialId}" names no repository it may be sent to (store it with "repository")`);
  if (!isWithinRepository(url, secret.repository)) throw new HostCapabilityError(`credential "${credentialId}" may not be sent to ${url.origin}${url.pathname}: it is bound to another repository`);
  if (secret?.scheme === 'bearer') return { headers: { Authorization: `Bearer ${token}` }, token };
  const username = typeof secret?.username === 'string' && secret.username !== '' ? secret.username : 'x-access-token';
  return { headers: { Authorization: `Basic ${Buffer.from(`${username}:${token}`).toString('base64')}` }, token };
}

/**
 * True when `url` is the repository `bound` names, or lies below it (`https://host/acme` covers
 * every repository of acme): same scheme, host and port, and a path that extends the bound one at
 * a `/`. A trailing `/` or `.git` does not count.
 */
export function isWithinRepository(url: URL, bound: string): boolean {
  let boundUrl: URL;
  try {
    boundUrl = new URL(bound);
  } catch {
    return false;
  }
  const path = (candidate: URL) => withoutTrailing(candidate.pathname, '/').replace(/\.git$/, '');
  if (boundUrl.origin !== url.origin) return false;
  const boundPath = path(boundUrl);
  const requested = path(url);
  return requested === boundPath || requested.startsWith(`${boundPath}/`);
}

function checkFiles(value: unknown, directory: string): Array<{ path: string; content: string }> {
  if (!Array.isArray(value) || value.length === 0) throw new HostCapabilityError('files must be a non-empty array of {path, content}');
  if (value.length > MAX_FILES) throw new HostCapabilityError(`at most ${MAX_FILES} files per commit`);
  return value.map((file: unknown, index) => {
    const { path, content } = (file ?? {}) as { path?: unknown; content?: unknown };
    const problem = explainUnsafePath(path);
    if (problem !== null) throw new HostCapabilityError(`files[${index}].path ${problem}`);
    if (typeof content !== 'string') throw new HostCapabilityError(`files[${index}].content must be a string`);
    const relative = safeKitPath(path);
    if (relative.split('/').some(namesGitDirectory)) throw new HostCapabilityError(`files[${index}].path must not be inside .git`);
    return { path: directory === '' ? relative : `${directory}/${relative}`, content };
  });
}

/** Commits onto the branch's head (or starts the branch); commits nothing when nothing changed. */
const commitFiles: Operation<GitCommitResult> = async (remote, argument, options, dir) => {
  const files = checkFiles(argument.files, remote.directory);
  const message = typeof argument.message === 'string' && argument.message.trim() !== '' ? argument.message : null;
  if (message === null) throw new HostCapabilityError('message must be a non-empty string');
  const author = pickAuthor(argument.author) ?? options.author ?? DEFAULT_AUTHOR;
  refuseFileFolderClashes(files);

  const parent = await remoteHead(remote);
  if (parent === null) {
    await git.init({ fs, dir, defaultBranch: remote.branch });
    await git.addRemote({ fs, dir, remote: 'origin', url: remote.url });
  } else {
    await git.clone({ fs, http: remote.http, dir, url: remote.url, ref: remote.branch, singleBranch: true, depth: 1, noTags: true, headers: { ...remote.headers } });
  }
  // A clone writes its whole checkout, which takes no signal: nothing more once it is over.
  stopIfAborted(remote.signal);
  await checkWorkTreeTargets(dir, files);
  for (const file of files) {
    stopIfAborted(remote.signal);
    await writeWorkTreeFile(dir, file);
    await git.add({ fs, dir, filepath: file.path });
  }
  if (parent !== null) {
    const matrix = await git.statusMatrix({ fs, dir, filepaths: files.map((f) => f.path) });
    // [path, HEAD, workdir, stage]: 1,1,1 means the file is already committed with this content.
    if (matrix.every(([, head, workdir, stage]) => head === 1 && workdir === 1 && stage === 1)) {
      return { commit: parent, parent, branch: remote.branch, changed: false, files: files.length };
    }
  }
  const commit = await git.commit({ fs, dir, message, author });
  // The last moment a push can be called off before the server hears of it; the client refuses
  // every request after the signal too, and the signal destroys the one under way.
  stopIfAborted(remote.signal);
  const pushed = await git.push({ fs, http: remote.http, dir, remote: 'origin', ref: remote.branch, headers: { ...remote.headers }, signal: remote.signal });
  if (!pushed.ok) throw new HostCapabilityError(`the git server rejected the push to ${remote.branch}: ${pushed.error ?? 'unknown reason'}`);
  return { commit, parent, branch: remote.branch, changed: true, files: files.length };
};

/** Checks that the branch contains the commit and, when files are given, that it holds them. */
const verifyCommit: Operation<GitVerifyResult> = async (remote, argument, _options, dir) => {
  const commit = String(argument.commit);
  if (!COMMIT.test(commit)) throw new HostCapabilityError('commit must be a 40-character commit id');
  const files = argument.files === undefined ? [] : checkFiles(argument.files, remote.directory);
  const head = await remoteHead(remote);
  if (head === null) return { onBranch: false, head: null, missing: files.map((f) => f.path), different: [] };
  await git.clone({ fs, http: remote.http, dir, url: remote.url, ref: remote.branch, singleBranch: true, depth: VERIFY_HISTORY_DEPTH, noTags: true, noCheckout: true, headers: { ...remote.headers } });
  const onBranch = head === commit || (await isAncestor(dir, commit, head));
  if (!onBranch) return { onBranch: false, head, missing: files.map((f) => f.path), different: [] };
  const missing: string[] = [];
  const different: string[] = [];
  for (const file of files) {
    try {
      const { blob } = await git.readBlob({ fs, dir, oid: commit, filepath: file.path });
      if (Buffer.from(blob).toString('utf8') !== file.content) different.push(file.path);
    } catch {
      missing.push(file.path);
    }
  }
  return { onBranch, head, missing, different };
};

async function remoteHead(remote: Remote): Promise<string | null> {
  // isomorphic-git adds its own headers to the object it is given, so every call gets a copy.
  const refs = await git.listServerRefs({ http: remote.http, url: remote.url, prefix: `refs/heads/${remote.branch}`, headers: { ...remote.headers } });
  const head = refs.find((ref) => ref.ref === `refs/heads/${remote.branch}`)?.oid ?? null;
  // The id goes back to the hook (`parent`, `head`) as the server wrote it: only a commit id may.
  if (head !== null && !COMMIT.test(head)) throw new HostCapabilityError(`the git server at ${remote.origin} advertised ${remote.branch} at something that is not a commit id`);
  return head;
}

async function isAncestor(dir: string, commit: string, head: string): Promise<boolean> {
  try {
    return await git.isDescendent({ fs, dir, oid: head, ancestor: commit, depth: VERIFY_HISTORY_DEPTH });
  } catch {
    return false;
  }
}

/**
 * The kit's author, or undefined when it names none. isomorphic-git writes it into the commit's
 * header as `author <name> <<email>> <time>` without escaping anything, so a line break in either
 * would add header lines of the kit's choosing (a second author, a committer, a gpgsig) and `<` or
 * `>` would move where the address seems to end: those, other control characters and more than
 * 200 characters are refused (git's own ident rules strip the same characters).
 */
function pickAuthor(value: unknown): { name: string; email: string } | undefined {
  const { name, email } = (value ?? {}) as { name?: unknown; email?: unknown };
  if (typeof name !== 'string' || typeof email !== 'string' || name === '' || email === '') return undefined;
  for (const [field, text] of [['name', name], ['email', email]] as const) {
    // eslint-disable-next-line no-control-regex
    if (text.length > 200 || /[\u0000-\u001f\u007f<>\u2028\u2029]/.test(text)) {
      throw new HostCapabilityError(`author.${field} must be at most 200 characters, without "<", ">", line breaks or other control characters`);
    }
  }
  return { name, email };
}

/** isomorphic-git errors carry URLs and response bodies; the kit author gets a plain reason. */
function describeGitError(error: unknown, remote: Remote): string {
  const code = (error as { code?: unknown })?.code;
  const status = (error as { data?: { statusCode?: unknown } })?.data?.statusCode;
  if (code === 'HttpError' && (status === 401 || status === 403)) {
    return remote.credential === null
      ? `the git server at ${remote.origin} requires authentication (HTTP ${String(status)}); name a credential`
      : `the git server at ${remote.origin} refused credential "${remote.credential}" (HTTP ${String(status)})`;
  }
  if (code === 'HttpError') return `the git server at ${remote.origin} answered HTTP ${String(status)}${typeof status === 'number' && status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`;
  if (code === 'PushRejectedError') return `the git server rejected the push to ${remote.branch} (the branch moved meanwhile?)`;
  if (code === 'SmartHttpError' || code === 'UnknownTransportError') return `${remote.origin} does not speak the git smart HTTP protocol`;
  if (error instanceof NonPublicAddressError || (error as { code?: unknown })?.code === 'ENONPUBLIC') return `repository ${remote.origin} is not an allowed git remote`;
  // Node gives every file-system error a path; the rest with an errno come from the network.
  if (typeof (error as { path?: unknown })?.path === 'string') return `the worker could not write its copy of the repository (${String(code)})`;
  const sys = (error as { code?: unknown; errno?: unknown }).errno !== undefined ? String(code) : null;
  if (sys !== null) return `cannot reach the git server at ${remote.origin} (${sys})`;
  return `git operation failed: ${String((error as Error)?.message ?? error).split('\n')[0]}`;
}
