import { ServerResponse } from 'node:http';

/** Where the bodies go: the test file now running sets it (one worker process runs many files). */
type Sink = (response: { path: string; text: string }) => void;
const SINK = Symbol.for('specwright.test.serverResponseSink');
const PATCHED = Symbol.for('specwright.test.serverResponsesRecorded');
// Enough for any JSON answer; a large download is kept in part (hashes sit in JSON answers).
const MAX_RECORDED_BYTES = 4 * 1024 * 1024;

type Recorded = { chunks: Buffer[]; bytes: number };
type Global = typeof globalThis & { [SINK]?: Sink };
type Patchable = typeof ServerResponse.prototype & { [PATCHED]?: true };

function bytesOf(chunk: unknown, encoding: unknown): Buffer | undefined {
  if (typeof chunk === 'string') return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return undefined;
}

/**
 * Hands every response body an HTTP server of this process writes — whoever asked for it: the test
 * helpers, the typed client, a bare fetch or http.request — to `sink`, as it ends. The body is seen
 * where the service writes it, so no client can be left out of a scan. node:http is shared by the
 * test files a worker process runs, so it is patched once, and each file points the sink at itself.
 */
export function recordServerResponses(sink: Sink): void {
  (globalThis as Global)[SINK] = sink;
  const prototype = ServerResponse.prototype as Patchable;
  if (prototype[PATCHED]) return;
  prototype[PATCHED] = true;
  const recorded = new WeakMap<ServerResponse, Recorded>();
  const keep = (response: ServerResponse, chunk: unknown, encoding: unknown) => {
    const bytes = bytesOf(chunk, encoding);
    if (!bytes || bytes.length === 0) return;
    let entry = recorded.get(response);
    if (!entry) recorded.set(response, (entry = { chunks: [], bytes: 0 }));
    if (entry.bytes >= MAX_RECORDED_BYTES) return;
    const part = bytes.subarray(0, MAX_RECORDED_BYTES - entry.bytes);
    entry.chunks.push(Buffer.from(part));
    entry.bytes += part.length;
  };
  const { write, end } = prototype;
  prototype.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    keep(this, chunk, rest[0]);
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof write;
  prototype.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') keep(this, chunk, rest[0]);
    const entry = recorded.get(this);
    recorded.delete(this);
    (globalThis as Global)[SINK]?.({ path: `${this.req?.method} ${this.req?.url}`, text: Buffer.concat(entry?.chunks ?? []).toString('utf8') });
    return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as typeof end;
}
