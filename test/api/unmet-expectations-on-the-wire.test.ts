import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

/** Writes `raw` on one connection and answers every byte the server sent until it closed or went quiet. */
const exchange = (raw: string, quietMs = 500) =>
  new Promise<string>((resolve, reject) => {
    const { port, hostname } = new URL(app.url);
    const socket = connect(Number(port), hostname, () => socket.write(raw));
    let received = '';
    let quiet: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(quiet);
      socket.destroy();
      resolve(received);
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      clearTimeout(quiet);
      quiet = setTimeout(done, quietMs);
    });
    socket.on('end', done);
    socket.on('error', reject);
  });
/** The status lines answered, in order (a body ends right where the next answer's status line begins). */
const statusLines = (wire: string) => wire.match(/HTTP\/1\.1 \d{3} [^\r]*/g) ?? [];

describe('417 EXPECTATION_FAILED on the wire', () => {
  it('answers a HEAD with the headers only, so a request pipelined after it is answered in turn', async () => {
    const wire = await exchange('HEAD /api/health HTTP/1.1\r\nHost: x\r\nExpect: x-check\r\n\r\nGET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(statusLines(wire)).toEqual(['HTTP/1.1 417 Expectation Failed', 'HTTP/1.1 200 OK']);
    // No body after the 417's headers: the next bytes are the 200's status line.
    const afterHead = wire.slice(wire.indexOf('\r\n\r\n') + 4);
    expect(afterHead.startsWith('HTTP/1.1 200 OK')).toBe(true);
  });

  it('drops a small body and answers the request pipelined after it on the kept-alive connection', async () => {
    const body = '{"name":"x"}';
    const wire = await exchange(
      `POST /api/projects HTTP/1.1\r\nHost: x\r\nExpect: x-check\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(statusLines(wire)).toEqual(['HTTP/1.1 417 Expectation Failed', 'HTTP/1.1 200 OK']);
  });

  it('answers in turn behind a request pipelined before it', async () => {
    const wire = await exchange('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\nGET /api/health HTTP/1.1\r\nHost: x\r\nExpect: x-check\r\n\r\nGET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(statusLines(wire)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 417 Expectation Failed', 'HTTP/1.1 200 OK']);
  });

  it('logs nothing of a download link it refuses', async () => {
    const token = 'eyJzZWNyZXQiOiJkb3dubG9hZCJ9.c2lnbmF0dXJlLW9mLXRoZS1saW5r';
    const wire = await exchange(`GET /api/downloads/${token} HTTP/1.1\r\nHost: x\r\nExpect: x-check\r\nX-Request-ID: refused-download-1\r\n\r\n`);
    expect(statusLines(wire)).toEqual(['HTTP/1.1 417 Expectation Failed']);
    expect(app.logLines.filter((line) => line.requestId === 'refused-download-1')).toHaveLength(1);
    expect(app.rawLog.filter((line) => line.includes(token))).toEqual([]);
  });
});
