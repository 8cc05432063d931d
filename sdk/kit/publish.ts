/**
 * Publishing a kit: `POST {url}/api/{orgId}/kits` with `{manifest, files}` — the manifest object and
 * every file it references, by forward-slash path relative to the kit directory. The server answers
 * 201 with the published version, or the error envelope (VALIDATION_ERROR with
 * `details.problems[{file, line?, message}]`, CONFLICT when that version exists, UNAUTHORIZED,
 * FORBIDDEN, NOT_FOUND). A CONFLICT with `details.samePackage` says this very package is that
 * version already (a publish retried after its answer was lost), with the version in
 * `details.published`: the kit is in place, so that is a success, `alreadyPublished`. The body is
 * written in chunks so a caller can show upload progress.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KitPackageProblem } from '../../kit-runtime/index.ts';
import { loadKitDirectory } from './kit-directory.ts';

export type PublishedKit = { id: string; kitId: string; version: string; displayName: string; status: string; createdAt: string };

/**
 * What a publish that succeeded leaves in place. `alreadyPublished`: this very package was that
 * version before (nothing changed; `createdAt` is when it was first stored).
 */
export type PublishOutcome = PublishedKit & { alreadyPublished: boolean };

export type PublishProgress =
  | { stage: 'validated'; kitRef: string; files: number; bytes: number }
  | { stage: 'uploading'; sentBytes: number; totalBytes: number }
  | { stage: 'waiting' };

export type PublishOptions = {
  dir: string;
  url: string;
  apiKey: string;
  orgId: string;
  onProgress?: (progress: PublishProgress) => void;
  /** Give up after this long without an answer (default 60 s). */
  timeoutMs?: number;
};

export class PublishError extends Error {
  override name = 'PublishError';
  /**
   * The server's error code (VALIDATION_ERROR, CONFLICT, …); LOCAL for problems found before sending;
   * UNREACHABLE, TIMEOUT (no answer in time, or the server's 408: the upload was too slow), TLS (the
   * server does not answer https, or its certificate is not trusted) or BAD_RESPONSE (an answer that
   * is not the service's) when the service gave none.
   */
  readonly code: string;
  readonly status: number | null;
  readonly problems: KitPackageProblem[];
  constructor(message: string, code: string, status: number | null, problems: KitPackageProblem[] = []) {
    super(message);
    this.code = code;
    this.status = status;
    this.problems = problems;
  }
}

const CHUNK_BYTES = 16 * 1024;
const DEFAULT_TIMEOUT_MS = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The request body publishing sends: the manifest as written in kit.json and the referenced files. */
export async function buildPublishBody(dir: string): Promise<{ body: { manifest: unknown; files: Record<string, string> }; kitRef: string }> {
  const loaded = await loadKitDirectory(dir);
  if (!loaded.ok) throw new PublishError(`the kit has ${loaded.problems.length} problem${loaded.problems.length === 1 ? '' : 's'}; fix them before publishing`, 'LOCAL', null, loaded.problems);
  return { body: { manifest: loaded.manifest, files: loaded.files }, kitRef: loaded.kit.ref };
}

export async function publishKit(options: PublishOptions): Promise<PublishOutcome> {
  const base = parseServerUrl(options.url);
  // Trimmed like the key: a CRLF .env file leaves \r on every value it sets.
  const orgId = options.orgId.trim();
  // Not echoed: swapped flags put the API key here.
  if (!UUID.test(orgId)) throw new PublishError('the organization id must be a uuid (the value given is not shown: it may be a key)', 'LOCAL', null);
  const apiKey = headerSafeKey(options.apiKey);
  const { body, kitRef } = await buildPublishBody(options.dir);
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  options.onProgress?.({ stage: 'validated', kitRef, files: Object.keys(body.files).length, bytes: payload.length });

  const target = new URL(`api/${encodeURIComponent(orgId)}/kits`, base);
  const { status, text, retryAfter, location } = await send(target, apiKey, payload, options);
  // A refusal that says when to try again (429, 503) is worth little without the time it names.
  const wait = (status === 429 || status === 503) && retryAfter !== undefined ? ` (Retry-After: ${/^\d+$/.test(retryAfter) ? `${retryAfter} s` : retryAfter})` : '';
  let envelope: { success?: boolean; data?: PublishedKit; error?: { code?: unknown; message?: unknown; details?: { problems?: KitPackageProblem[]; issues?: RequestIssue[]; samePackage?: unknown; published?: unknown } } } | null;
  // The service never redirects a publish: a redirect is someone else's answer, whatever its body.
  if (status >= 300 && status < 400) throw notSpecwrightResponse(target, status, payload.length, wait, location);
  try {
    envelope = JSON.parse(text);
  } catch {
    throw notSpecwrightResponse(target, status, payload.length, wait, location);
  }
  if (envelope === null || typeof envelope !== 'object') throw notSpecwrightResponse(target, status, payload.length, wait, location);
  if (status === 201 && envelope.success === true) {
    // Anything else would be printed as "Published undefined@undefined", exit code 0.
    if (!isPublishedKit(envelope.data)) throw new PublishError(`${target.origin} answered HTTP 201 without the published version; --url should be the service's base URL (https://host[:port], without /api or /trpc)`, 'BAD_RESPONSE', status);
    return { ...envelope.data, alreadyPublished: false };
  }
  const error = envelope.error;
  // Told by the details, never by the message's words: only this CONFLICT carries them.
  if (status === 409 && error?.code === 'CONFLICT' && error.details?.samePackage === true && isPublishedKit(error.details.published)) {
    return { ...error.details.published, alreadyPublished: true };
  }
  if (!error?.message) throw new PublishError(`${target.origin} answered HTTP ${status} without an error message`, 'BAD_RESPONSE', status);
  // tRPC's own errors (a --url ending in /trpc) carry a numeric JSON-RPC code: not a Specwright answer.
  if (typeof error.code !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(error.code) || typeof error.message !== 'string') throw notSpecwrightResponse(target, status, payload.length, wait);
  const problems = Array.isArray(error.details?.problems) ? error.details.problems.filter((p) => typeof p?.file === 'string' && typeof p?.message === 'string').map(problemAsShown) : [];
  const issues = Array.isArray(error.details?.issues) ? error.details.issues.filter((i) => typeof i?.field === 'string' && typeof i?.issue === 'string').map(issueAsProblem).map(problemAsShown) : [];
  // `kit validate` counts files as they are on disk; the server's limit applies to them as JSON text.
  const size = error.code === 'PAYLOAD_TOO_LARGE' ? `: ${bodySizeExplained(payload.length)}; the server takes up to its UPLOAD_LIMIT_BYTES` : '';
  // What the other end wrote is shown: a gateway that echoes the request's headers must not put the key on screen.
  const hideKey = (text: string) => text.replaceAll(apiKey, '(the API key)');
  const shown = [...problems, ...issues].map((problem) => ({ ...problem, file: hideKey(problem.file), message: hideKey(problem.message) }));
  throw new PublishError(hideKey(`${oneLine(error.message)}${size}${wait}`), error.code, status, shown);
}

/**
 * A problem as the server sent it, held to the one-line `file[:line]: message` every tool prints:
 * a line break or a terminal escape in what a server (or a proxy) wrote never reaches the terminal.
 */
function problemAsShown(problem: KitPackageProblem): KitPackageProblem {
  const shown: KitPackageProblem = { file: oneLine(problem.file), message: oneLine(problem.message) };
  if (Number.isSafeInteger(problem.line) && (problem.line as number) > 0) shown.line = problem.line as number;
  return shown;
}

function isPublishedKit(value: unknown): value is PublishedKit {
  if (value === null || typeof value !== 'object') return false;
  const fields = value as Record<keyof PublishedKit, unknown>;
  return (['id', 'kitId', 'version', 'displayName', 'status', 'createdAt'] as const).every((name) => typeof fields[name] === 'string');
}

/**
 * An answer that is not the service's. A proxy in front of it answers 413 (its own body limit),
 * 429 and 5xx (the service down or restarting) with its own page; any other status most likely
 * means --url points somewhere else.
 */
function notSpecwrightResponse(target: URL, status: number, bytes: number, wait: string, location?: string): PublishError {
  // Not followed: the API key and the kit would go wherever it points. Named by origin alone.
  const redirect = status >= 300 && status < 400 && location ? redirectOriginOf(location, target) : undefined;
  if (redirect !== undefined) {
    return new PublishError(`${target.origin} answered HTTP ${status}, a redirect to ${redirect}, which publish does not follow (it would take the API key along); --url should be the service's own base URL`, 'BAD_RESPONSE', status);
  }
  const answered = `${target.origin} answered HTTP ${status} with a body that is not a Specwright response`;
  // Node answers a request whose body did not arrive within its time (the service's
  // HTTP_REQUEST_TIMEOUT_MS) with a bare 408: the url is right, the upload was too slow.
  if (status === 408) {
    return new PublishError(`${target.origin} answered HTTP 408 Request Timeout: the upload (${(bytes / 1024).toFixed(1)} KiB) did not arrive within the server's time limit; try again, on a faster connection`, 'TIMEOUT', status);
  }
  const message =
    status === 413 ? `${answered}: a proxy in front of the service refused the upload as too large: ${bodySizeExplained(bytes)}`
    : status === 429 || status >= 500 ? `${answered}: a proxy in front of the service refused the request or could not reach the service; try again later${wait}`
    : `${answered}; --url should be the service's base URL (https://host[:port], without /api or /trpc)`;
  return new PublishError(message, 'BAD_RESPONSE', status);
}

/**
 * The key as it can travel in a header. Surrounding whitespace is dropped, as the typed client's
 * fetch does (a key read from a CRLF .env file ends in \r); any other control or non-ASCII character
 * makes Node refuse the header, so it is refused here, in words that do not show the key.
 */
function headerSafeKey(apiKey: string): string {
  const key = apiKey.trim();
  if (key === '') throw new PublishError('an API key is required', 'LOCAL', null);
  if (/[^\x20-\x7e]/.test(key)) throw new PublishError('the API key contains a control or non-ASCII character, which no API key has (the key is not shown); check how it was copied', 'LOCAL', null);
  return key;
}

function bodySizeExplained(bytes: number): string {
  return `the kit is ${(bytes / 1024).toFixed(1)} KiB as a JSON request body (escaping grows text full of quotes, backslashes or control characters)`;
}

/** A field-level refusal of the request (`details.issues`), told as a problem of the kit file it concerns. */
type RequestIssue = { field: string; issue: string };
function issueAsProblem({ field, issue }: RequestIssue): KitPackageProblem {
  if (field.startsWith('files.')) return { file: field.slice('files.'.length), message: issue };
  if (field === 'manifest' || field.startsWith('manifest.')) return { file: 'kit.json', message: field === 'manifest' ? issue : `${field.slice('manifest.'.length)}: ${issue}` };
  return { file: '(request)', message: `${field}: ${issue}` };
}

/**
 * The server to publish to. The API key travels with the request, so plain http is taken only for
 * this machine (localhost, 127.0.0.0/8, ::1); and a value that is not a URL is not echoed back, in
 * case it is a key pasted in the wrong place.
 */
function parseServerUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PublishError('the server URL is not a URL (expected https://host[:port])', 'LOCAL', null);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new PublishError(`the server URL must be https (or http on this machine), not ${parsed.protocol}`, 'LOCAL', null);
  if (parsed.username !== '' || parsed.password !== '') throw new PublishError('the server URL must not carry credentials; pass the API key with --api-key', 'LOCAL', null);
  if (parsed.protocol === 'http:' && !isThisMachine(parsed.hostname)) {
    throw new PublishError(`the server URL must be https: over http://${parsed.host} the API key would travel in clear text`, 'LOCAL', null);
  }
  if (!parsed.pathname.endsWith('/')) parsed.pathname += '/';
  return parsed;
}

function redirectOriginOf(location: string, target: URL): string {
  try {
    return new URL(location, target).origin;
  } catch {
    return 'an address that is not a URL';
  }
}

function isThisMachine(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * POSTs the payload in chunks (for progress) and reads the answer, which stops the upload if it
 * comes first; a connection that failed before any answer is UNREACHABLE.
 */
function send(target: URL, apiKey: string, payload: Buffer, options: PublishOptions): Promise<{ status: number; text: string; retryAfter: string | undefined; location: string | undefined }> {
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolvePromise, reject) => {
    const req = request(target, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Length': payload.length, 'X-API-Key': apiKey, Accept: 'application/json' },
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    });
    let answered = false;
    let sent = 0;
    req.on('timeout', () => {
      reject(new PublishError(`${target.origin} did not answer in time`, 'TIMEOUT', null));
      req.destroy();
    });
    req.on('error', (error) => {
      // Once answered, the server hanging up on the rest of the body is expected; the answer decides.
      if (answered) return;
      const code = (error as NodeJS.ErrnoException).code;
      const tls = code === undefined ? undefined : tlsFailure(code, error.message);
      if (tls !== undefined) reject(new PublishError(`cannot connect securely to ${target.origin} (${code}): ${tls}; neither the API key nor the kit was sent`, 'TLS', null));
      else reject(new PublishError(`cannot reach ${target.origin}${code ? ` (${code})` : `: ${oneLine(error.message)}`}`, 'UNREACHABLE', null));
    });
    req.on('response', (res: IncomingMessage) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        // A request cut short cannot be reused: close it, or its socket keeps the process alive.
        if (sent < payload.length) req.destroy();
        const retryAfter = res.headers['retry-after']?.trim();
        resolvePromise({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter: retryAfter ? oneLine(retryAfter).slice(0, 64) : undefined, location: res.headers.location });
      });
      res.on('close', () => {
        if (!res.complete) reject(new PublishError(`${target.origin} closed the connection in the middle of its answer`, 'UNREACHABLE', res.statusCode ?? null));
      });
    });
    const writeMore = (): void => {
      while (sent < payload.length) {
        if (answered) return;
        const chunk = payload.subarray(sent, sent + CHUNK_BYTES);
        sent += chunk.length;
        options.onProgress?.({ stage: 'uploading', sentBytes: sent, totalBytes: payload.length });
        if (!req.write(chunk)) {
          req.once('drain', writeMore);
          return;
        }
      }
      req.end();
      options.onProgress?.({ stage: 'waiting' });
    };
    writeMore();
  });
}

/**
 * Why the TLS handshake failed, for the codes Node gives it: the other end does not speak TLS there
 * (EPROTO, ERR_SSL_*), or certificate verification failed (OpenSSL's X509 codes: CERT_HAS_EXPIRED,
 * DEPTH_ZERO_SELF_SIGNED_CERT, …; ERR_TLS_CERT_ALTNAME_INVALID). Unlike a server that is down,
 * neither goes away by trying again, so it is not UNREACHABLE (exit code 3, "try again later").
 */
function tlsFailure(code: string, message: string): string | undefined {
  if (code === 'EPROTO' || code.startsWith('ERR_SSL_')) return "the server there does not answer https; check --url's scheme and port (the service itself may serve plain http)";
  if (/CERT|CRL|^INVALID_CA$|^INVALID_PURPOSE$|^PATH_LENGTH_EXCEEDED$|^HOSTNAME_MISMATCH$|^ERR_TLS_/.test(code)) return `its certificate is not trusted: ${oneLine(message)}`;
  return undefined;
}

/** Text from the other end, shown on one line without control characters (an escape sequence would drive the terminal). */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim();
}
