import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The tool server's connection with the assistant, against stand-ins for the service (one that
 * never answers, one that answers something else than an object): a call ends with the request
 * that asked for it, and what the server cannot read is said on stderr.
 */
const BIN = 'sdk/cli/bin.mjs';
const KEY = 'swk_abcdefgh_0123456789abcdef0123456789abcdef';
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A stand-in for the service on an ephemeral port; `requests` tells when each call arrives and when its connection closes. */
async function standIn(answer: (req: IncomingMessage, res: ServerResponse) => void) {
  const requests: Array<{ arrived: true; closed: Promise<void> }> = [];
  let arrived: () => void = () => {};
  const server = createServer((req, res) => {
    requests.push({ arrived: true, closed: new Promise((resolve) => res.once('close', () => resolve())) });
    arrived();
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  const nextRequest = () => new Promise<void>((resolve) => (arrived = resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, nextRequest };
}

/** `answer` in tRPC's shape, inside an array when the call came in a batch. */
function answerAsTrpc(req: IncomingMessage, res: ServerResponse, status: number, answer: object) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(req.url!.includes('batch=1') ? [answer] : answer));
}

/** The SDK's client, connected to a tool server it started against `url` with `apiKey`. */
async function connectedClient(url: string, apiKey = KEY): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'tool-server'], env: { PATH: process.env.PATH!, SPECWRIGHT_URL: url, SPECWRIGHT_API_KEY: apiKey }, stderr: 'pipe' });
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(transport);
  cleanups.push(() => void client.close());
  return client;
}

/** The tool server as a process spoken to line by line, as an assistant does. */
function toolServer(url: string) {
  const child = spawn(process.execPath, [BIN, 'tool-server'], { env: { PATH: process.env.PATH!, SPECWRIGHT_URL: url, SPECWRIGHT_API_KEY: KEY }, stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // The server may end before reading everything written to it (the oversized message).
  child.stdin.on('error', () => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const initialized = async () => {
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } });
    while (!stdout.includes('"id":0')) await sleep(20);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  };
  /** How the process ended, or 'still running' after `ms`. */
  const endWithin = (ms: number) => Promise.race([exited, sleep(ms).then(() => 'still running' as const)]);
  return { child, send, initialized, endWithin, stdout: () => stdout, stderr: () => stderr };
}

describe('specwright tool-server, its calls and its connection', () => {
  it('ends at once when the assistant closes stdin in the middle of a call, closing that call’s request', async () => {
    const service = await standIn(() => {}); // never answers
    const server = toolServer(service.url);
    await server.initialized();
    const arrived = service.nextRequest();
    server.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } });
    await arrived;
    server.child.stdin.end();
    expect(await server.endWithin(5_000)).toEqual({ code: 0, signal: null });
    await service.requests[0]!.closed;
    expect(server.stderr()).toBe('');
  });

  it('aborts the request of a call the assistant cancels', async () => {
    const service = await standIn(() => {});
    const client = await connectedClient(service.url);
    const cancel = new AbortController();
    const arrived = service.nextRequest();
    const called = client.callTool({ name: 'list_projects', arguments: {} }, undefined, { signal: cancel.signal }).catch((error: Error) => error);
    await arrived;
    cancel.abort();
    await called;
    const closed = await Promise.race([service.requests[0]!.closed.then(() => 'closed'), sleep(5_000).then(() => 'still open')]);
    expect(closed).toBe('closed');
  });

  it('answers data that is not a JSON object as text only (MCP structured content must be an object)', async () => {
    // Something at the URL answering tRPC's shape with an array: as structured content, the client refused the whole result.
    const service = await standIn((req, res) => {
      const answer = { result: { data: ['not', 'an', 'object'] } };
      answerAsTrpc(req, res, 200, answer);
    });
    const client = await connectedClient(service.url);
    const result = (await client.callTool({ name: 'whoami', arguments: {} })) as CallToolResult;
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(['not', 'an', 'object']);
  });

  it('answers a file that is not one (something other than the service at the URL) as text, not a result the client refuses', async () => {
    const service = await standIn((req, res) => {
      const answer = { result: { data: req.url!.includes('kitExecutions.output') ? ['not', 'a', 'file'] : {} } };
      answerAsTrpc(req, res, 200, answer);
    });
    const client = await connectedClient(service.url);
    const args = { orgId: 'o', executionId: 'e', outputId: 'x' };
    const result = (await client.callTool({ name: 'get_output', arguments: args })) as CallToolResult;
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(['not', 'a', 'file']);
  });

  it('blanks the API key from a refusal that quotes it (something other than the service answering at the URL)', async () => {
    const service = await standIn((req, res) => {
      const answer = { error: { message: `key ${req.headers['x-api-key']} is not valid here`, code: -32001, data: { code: 'UNAUTHORIZED', httpStatus: 401 } } };
      answerAsTrpc(req, res, 401, answer);
    });
    const client = await connectedClient(service.url, ` ${KEY} `);
    const result = (await client.callTool({ name: 'whoami', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toBe('UNAUTHORIZED: key [redacted] is not valid here');
  });

  it('blanks a key of a few characters only where it stands alone, not inside the words and the request id of a refusal', async () => {
    const requestId = 'e0c4be1e-5e7a-4e2e-9e0e-0e1e2e3e4e5e';
    const service = await standIn((req, res) => {
      const answer = { error: { message: `The API key is not valid (got ${req.headers['x-api-key']})`, code: -32001, data: { code: 'UNAUTHORIZED', httpStatus: 401, requestId } } };
      answerAsTrpc(req, res, 401, answer);
    });
    const client = await connectedClient(service.url, 'e');
    const result = (await client.callTool({ name: 'whoami', arguments: {} })) as CallToolResult;
    expect((result.content[0] as { text: string }).text).toBe(`UNAUTHORIZED: The API key is not valid (got [redacted])\nRequest id: ${requestId}`);
  });

  it('says on stderr what it could not read, and exits 1 when that ended the connection', async () => {
    const service = await standIn(() => {});
    const server = toolServer(service.url);
    await server.initialized();
    server.child.stdin.write('not json\n');
    // Over the transport's 10 MiB: it drops the connection.
    server.child.stdin.write('x'.repeat(11 * 1024 * 1024));
    expect(await server.endWithin(10_000)).toEqual({ code: 1, signal: null });
    expect(server.stderr()).toMatch(/^specwright tool-server: .*not valid JSON\n/);
    expect(server.stderr()).toMatch(/specwright tool-server: ReadBuffer exceeded maximum size of 10485760 bytes\n$/);
    expect(server.stdout().split('\n').filter(Boolean).every((line) => JSON.parse(line).jsonrpc === '2.0')).toBe(true);
    expect(server.stderr()).not.toContain(KEY);
  });
});
