import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Logger } from '../logger.ts';
import { errorEnvelope } from './envelope.ts';
import { securityHeaderLines } from './security-headers.ts';

/**
 * Node's HTTP parser gives up on a connection before any route sees it: bytes that are not HTTP,
 * or a body that ends (the client half-closed) before its Content-Length. Node then writes a bare
 * `400 Bad Request`; this answers in the envelope instead, with a request id and the security
 * headers, as every other refusal does. Timeouts (408) and request heads over the limit (431)
 * keep Node's own answers: the catalog has no code for them.
 */
const whyUnreadable = (code: string | undefined) =>
  code === 'HPE_INVALID_EOF_STATE' ? 'The connection ended before the request did (its body is shorter than its Content-Length)' : 'The request is not valid HTTP/1.1';

const nodeAnswers: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
};

export function answerClientError(log: Logger) {
  return (error: Error & { code?: string }, socket: Duplex & { _httpMessage?: { headersSent?: boolean } | null }): void => {
    // A response to this request has begun (or the peer is gone): nothing more can be said on it.
    // Earlier responses on a kept-alive connection are whole, so the next request can still be
    // answered, as Node's own handler does (it looks at the response in flight, not at the bytes
    // the socket ever wrote).
    if (!socket.writable || socket._httpMessage?.headersSent === true || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const nodeAnswer = error.code === undefined ? undefined : nodeAnswers[error.code];
    if (nodeAnswer) {
      socket.end(nodeAnswer);
      return;
    }
    const requestId = randomUUID();
    log.info({ requestId, parserError: error.code }, 'unreadable request refused');
    const body = JSON.stringify(errorEnvelope({ code: 'VALIDATION_ERROR', message: whyUnreadable(error.code) }, requestId));
    socket.end(
      [
        'HTTP/1.1 400 Bad Request',
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Cache-Control: no-store',
        `X-Request-ID: ${requestId}`,
        ...securityHeaderLines,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  };
}
