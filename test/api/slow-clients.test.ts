import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Clients that hold a connection without finishing their request, or without doing anything, are
 * cut off (slowloris): each such connection holds a file handle, and a few thousand would leave
 * none for anyone else. Timeouts here are short so the test is; the defaults are 20 s, 2 min, 70 s.
 */
let app: TestApp;
let port: number;
beforeAll(async () => {
  app = await startTestApp({ env: { HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2500', HTTP_IDLE_TIMEOUT_MS: '2000' } });
  port = Number(new URL(app.url).port);
});
afterAll(() => app?.stop());

/** Opens a connection, writes `sent`, and resolves with what came back once the server closed it (or null after `waitMs`). */
function holdOpen(sent: string, waitMs: number): Promise<{ answer: string } | null> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(null);
    }, waitMs);
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer });
    });
    socket.write(sent);
  });
}

/** Writes `sent`, half-closes the connection, and resolves with everything the server answered. */
function sendAndEnd(sent: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.end(sent);
  });
}

describe('requests that are not whole HTTP', () => {
  it.each([
    ['a body that ends before its Content-Length', 'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email": "a"', /ended before/],
    ['bytes that are not HTTP', 'HELLO THERE\r\n\r\n', /not valid HTTP/],
  ])('%s: VALIDATION_ERROR in the envelope, with a request id, and the connection closed', async (_case, sent, message) => {
    const answer = await sendAndEnd(sent);
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/\r\nconnection: close/i);
    // The security headers every other answer carries.
    expect(head).toMatch(/\r\nx-content-type-options: nosniff\r\n/i);
    expect(head).toMatch(/\r\ncontent-security-policy: default-src 'self';[^\r]*frame-ancestors 'self'/i);
    const requestId = /\r\nx-request-id: (\S+)/i.exec(head!)?.[1];
    expect(JSON.parse(body!)).toEqual({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: expect.stringMatching(message) },
      metadata: { timestamp: expect.any(String), requestId },
    });
  });
});

describe('a bad request on a kept-alive connection', () => {
  it.each([
    ['request head over 16 KiB', `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`, /^HTTP\/1\.1 431 /],
    ['bytes that are not HTTP', 'HELLO THERE\r\n\r\n', /^HTTP\/1\.1 400 [^]*not valid HTTP/],
  ])('after an answered request, a %s is still answered, not dropped', async (_case, second, expected) => {
    // The second request goes out once the first is answered: the connection is idle, not mid-response.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket: Socket = connect(port, '127.0.0.1');
      let received = '';
      let secondSent = false;
      socket.on('data', (chunk) => {
        received += chunk;
        if (secondSent || !/\r\n\r\n/.test(received)) return;
        secondSent = true;
        setTimeout(() => socket.end(second), 50);
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
      socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    const responses = answer.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(responses).toHaveLength(2);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 200 /);
    expect(responses[1]).toMatch(expected);
  });
});

describe('slow and idle clients', () => {
  it('are answered 408 and closed when their headers do not arrive in time', async () => {
    const closed = await holdOpen('GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: ', 10_000);
    expect(closed).not.toBeNull();
    expect(closed!.answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('are cut off when a body does not arrive in time', async () => {
    const closed = await holdOpen('POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"em', 10_000);
    expect(closed).not.toBeNull();
    expect(closed!.answer).not.toMatch(/^HTTP\/1\.1 [25]/);
  });

  it('are closed when a kept-alive connection goes idle', async () => {
    const closed = await holdOpen('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n', 10_000);
    expect(closed).not.toBeNull();
    expect(closed!.answer).toMatch(/^HTTP\/1\.1 200/);
  });
});
