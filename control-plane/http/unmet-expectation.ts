import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WireError } from '../errors/coerce-error.ts';
import { httpStatusFor } from '../errors/error-catalog.ts';
import type { Logger } from '../logger.ts';
import { trpcErrorShape } from '../trpc/error-mapping.ts';
import { decodeOrKeep } from './decode-or-keep.ts';
import { errorEnvelope } from './envelope.ts';
import { requestIdFor } from './request-id.ts';
import { setSecurityHeaders } from './security-headers.ts';
import { isTrpcPath, trpcProceduresOf } from './trpc-path.ts';

const UNMET: WireError = {
  code: 'EXPECTATION_FAILED',
  message: 'The only expectation this service meets is Expect: 100-continue; send the request without this Expect header',
};

/**
 * Node answers a request whose Expect names anything but 100-continue (RFC 9110 §10.1.1) before any
 * route sees it, with a bare 417: no body, no request id. Given this as its `checkExpectation`
 * listener, the server answers it as every other refusal instead: the surface's error shape (the
 * envelope, or tRPC's shape under /trpc), X-Request-ID and the security headers. The request is not run, nor counted
 * against a rate limit.
 */
export function answerUnmetExpectation(log: Logger, bodyLimitBytes: number) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const requestId = requestIdFor(req);
    // Not the URL: a download link's token is a credential.
    log.info({ requestId, method: req.method, expect: String(req.headers.expect).slice(0, 100) }, 'request with an unmet expectation refused');
    const url = req.url ?? '/';
    const body = JSON.stringify(isTrpcPath(url) ? { error: trpcErrorShape(UNMET, procedureOf(url), requestId) } : errorEnvelope(UNMET, requestId));
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Request-ID', requestId);
    setSecurityHeaders(req, res);
    // A body within the limit is read and dropped after the answer, as Node does on a connection
    // kept open; a larger one, or one of unknown length, is not waited for.
    if (!bodyIsDrainable(req, bodyLimitBytes)) res.setHeader('Connection', 'close');
    res.writeHead(httpStatusFor(UNMET.code));
    res.end(body);
  };
}

/** The procedure a tRPC path names, when it names one (not a batch), as its own errors say. */
function procedureOf(url: string): string | undefined {
  const procedures = trpcProceduresOf(decodeOrKeep(url.split('?')[0]!));
  return procedures && !procedures.includes(',') ? procedures : undefined;
}

function bodyIsDrainable(req: IncomingMessage, limitBytes: number): boolean {
  const { 'content-length': length, 'transfer-encoding': encoding } = req.headers;
  if (encoding !== undefined) return false;
  return length === undefined || Number(length) <= limitBytes;
}
