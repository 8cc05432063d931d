import type { Request, Response } from 'express';
import type { WireError } from '../errors/coerce-error.ts';
import { trpcErrorShape } from '../trpc/error-mapping.ts';
import { quotedPath } from '../errors/quoted-input.ts';
import { decodeOrKeep } from './decode-or-keep.ts';
import { failureAnswerFor } from './failure-answer.ts';
import { isVariantAPath, variantA, variantB } from './rest-surface.ts';
import { isTrpcPath, trpcProceduresOf } from './trpc-path.ts';

/**
 * Errors raised by express middleware (before a procedure runs) in the shape of the surface the
 * request came in on: Variant A's bare error under /api/basic, the Variant B envelope elsewhere
 * under /api, tRPC's error shape under /trpc.
 */
export function sendSurfaceError(req: Request, res: Response, error: WireError): void {
  const { status, headers = {} } = failureAnswerFor(error.code);
  const requestId = String(res.locals.requestId ?? '');
  // A header the refusal set itself (the download slots count their own Retry-After) is kept.
  for (const [name, value] of Object.entries(headers)) if (!res.hasHeader(name)) res.setHeader(name, value);
  if (isTrpcPath(req.originalUrl)) {
    // As tRPC's own errors read: its JSON-RPC code for the status, and the procedure called.
    const procedures = trpcProceduresOf(decodeOrKeep(req.originalUrl.split('?')[0]!));
    const path = procedures && !procedures.includes(',') ? procedures : undefined;
    res.status(status).json({ error: trpcErrorShape(error, path, requestId) });
    return;
  }
  const surface = isVariantAPath(req.originalUrl.split('?', 1)[0]!) ? variantA : variantB;
  res.status(status).json(surface.failureBody(error, requestId));
}

export function sendRateLimited(req: Request, res: Response): void {
  sendSurfaceError(req, res, { code: 'RATE_LIMITED', message: 'Too many requests; retry after the time in Retry-After' });
}

/** The NOT_FOUND of a path no route takes, naming the method and (the start of) the path. */
export function noRouteFor(req: Request) {
  // At a mount's own root (`/api/basic`) the path is "/": the path asked is the mount's.
  const path = req.baseUrl && req.path === '/' && !req.originalUrl.split('?', 1)[0]!.endsWith('/') ? req.baseUrl : `${req.baseUrl}${req.path}`;
  return { code: 'NOT_FOUND' as const, message: `No route for ${req.method} ${quotedPath(path)}` };
}
