/**
 * A loopback stand-in for the server's publish endpoint, implementing the wire contract exactly:
 * `POST /api/{orgId}/kits` with X-API-Key and `{manifest, files}` → 201 `{success, data: {id, kitId,
 * version, displayName, status, createdAt}}`, or `{success: false, error: {code, message, details?}}`
 * with VALIDATION_ERROR 400 (`details.problems`), CONFLICT 409 (with `details: {samePackage: true,
 * published}` when the package is the very one that version holds), UNAUTHORIZED 401, FORBIDDEN 403,
 * NOT_FOUND 404, PAYLOAD_TOO_LARGE 413. It checks packages with the same loadKitPackage the server uses, and keeps every
 * request it received so tests can assert the body.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadKitPackage } from '../../../kit-runtime/index.ts';

export type ReceivedPublish = { path: string; headers: IncomingMessage['headers']; body: unknown };

export type KitPublishServer = {
  url: string;
  apiKey: string;
  orgId: string;
  received: ReceivedPublish[];
  /** Published versions by `kitId@version`: what the publish answered, and the package it stored (as JSON). */
  published: Map<string, { data: Record<string, string>; packageJson: string }>;
  /** Turn the organization's kits_enabled flag off (FORBIDDEN). */
  kitsEnabled: boolean;
  /** Problems to answer VALIDATION_ERROR with, as a server with stricter checks would. */
  forcedProblems: Array<{ file: string; line?: number; message: string }> | null;
  /** Field-level refusals (`details.issues`), as the server's input validation answers. */
  forcedIssues: Array<{ field: string; issue: string }> | null;
  /** A body larger than this answers PAYLOAD_TOO_LARGE 413, as the server's UPLOAD_LIMIT_BYTES does. */
  bodyLimitBytes: number | null;
  /** An answer given to every request, after reading its body, as a proxy in front of the server would (its 502 page, a 429). */
  forcedAnswer: { status: number; headers?: Record<string, string>; body: string } | null;
  close(): Promise<void>;
};

export async function startKitPublishServer(): Promise<KitPublishServer> {
  const state = { apiKey: `swk_test_${randomUUID().slice(0, 8)}`, orgId: randomUUID(), received: [] as ReceivedPublish[], published: new Map() as KitPublishServer['published'], kitsEnabled: true, forcedProblems: null as KitPublishServer['forcedProblems'], forcedIssues: null as KitPublishServer['forcedIssues'], bodyLimitBytes: null as number | null, forcedAnswer: null as KitPublishServer['forcedAnswer'] };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => answer(state, req, Buffer.concat(chunks).toString('utf8'), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}

function answer(state: Omit<KitPublishServer, 'url' | 'close'>, req: IncomingMessage, text: string, res: ServerResponse): void {
  const fail = (status: number, code: string, message: string, details?: unknown) =>
    send(res, status, { success: false, error: { code, message, ...(details ? { details } : {}) }, metadata: { timestamp: new Date().toISOString(), requestId: randomUUID() } });
  if (state.forcedAnswer) {
    res.writeHead(state.forcedAnswer.status, state.forcedAnswer.headers ?? {}).end(state.forcedAnswer.body);
    return;
  }
  const match = /^\/api\/([^/]+)\/kits$/.exec(req.url ?? '');
  if (req.method !== 'POST' || !match) return fail(404, 'NOT_FOUND', 'Route not found');
  if (state.bodyLimitBytes !== null && Buffer.byteLength(text) > state.bodyLimitBytes) return fail(413, 'PAYLOAD_TOO_LARGE', 'The request body exceeds the size limit');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    return fail(400, 'VALIDATION_ERROR', 'Request body is not valid JSON');
  } finally {
    state.received.push({ path: req.url as string, headers: req.headers, body });
  }
  if (req.headers['x-api-key'] !== state.apiKey) return fail(401, 'UNAUTHORIZED', 'Invalid or missing credentials');
  if (match[1] !== state.orgId) return fail(404, 'NOT_FOUND', 'Organization not found');
  if (!state.kitsEnabled) return fail(403, 'FORBIDDEN', 'Kits are not enabled for this tenant (kits_enabled is off)');
  if (!String(req.headers['content-type']).startsWith('application/json')) return fail(400, 'VALIDATION_ERROR', 'Content-Type must be application/json');
  const { manifest, files } = (body ?? {}) as { manifest?: unknown; files?: Record<string, string> };
  if (state.forcedProblems) return fail(400, 'VALIDATION_ERROR', 'The kit package is invalid', { problems: state.forcedProblems });
  if (state.forcedIssues) return fail(400, 'VALIDATION_ERROR', 'Request validation failed', { issues: state.forcedIssues });
  const loaded = loadKitPackage({ manifest, files: files ?? {} });
  if (!loaded.ok) return fail(400, 'VALIDATION_ERROR', `The kit package has ${loaded.problems.length} problem(s)`, { problems: loaded.problems });
  const { metadata } = loaded.kit.manifest;
  // The server compares packages whatever their key order; the CLI writes them in one order, so JSON text will do here.
  const packageJson = JSON.stringify({ manifest, files });
  const stored = state.published.get(loaded.kit.ref);
  if (stored?.packageJson === packageJson) {
    return fail(409, 'CONFLICT', `Kit ${metadata.id} version ${metadata.version} is already published, with this very package: it is in place, and nothing changed`, { samePackage: true, published: stored.data });
  }
  if (stored) return fail(409, 'CONFLICT', `Kit ${metadata.id} version ${metadata.version} already exists; kit versions are immutable`);
  const data = { id: randomUUID(), kitId: metadata.id, version: metadata.version, displayName: metadata.displayName, status: 'active', createdAt: new Date().toISOString() };
  state.published.set(loaded.kit.ref, { data, packageJson });
  send(res, 201, { success: true, data, metadata: { timestamp: new Date().toISOString(), requestId: randomUUID() } });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}
