import type { AnyRouter } from '@trpc/server';
import type { NextFunction, Request, Response } from 'express';
import { createOpenApiNodeHttpHandler, type OpenAPIObject } from 'trpc-to-openapi';
import typeis from 'type-is';
import { logServerFault, toWireError, type WireError } from '../errors/coerce-error.ts';
import type { Context } from '../trpc/context.ts';
import { queryParameterRefusal } from './declared-query.ts';
import { failureAnswerFor } from './failure-answer.ts';
import { readsBody, unsupportedContentType } from './json-body.ts';
import { successStatusByProcedurePath } from './procedure-meta.ts';
import type { RestSurface } from './rest-surface.ts';
import { sendSurfaceError } from './surface-errors.ts';

type RestRequest = Request & { wireError?: WireError };

/**
 * The REST projection of a router (trpc-to-openapi), every body written as its surface writes them
 * (Variant B's envelope, Variant A's bare bodies) and every status taken from the error catalog or
 * the procedure's `successStatus`.
 */
export function createRestHandler(options: {
  router: AnyRouter;
  surface: RestSurface;
  createContext: (opts: { req: Request; res: Response }) => Context;
  maxBodySize: number;
  /** The REST surface's OpenAPI document: the query parameters each operation declares. */
  document: OpenAPIObject;
}) {
  const successStatuses = successStatusByProcedurePath(options.router);
  const refuseQuery = queryParameterRefusal(options.document);
  const handler = createOpenApiNodeHttpHandler<AnyRouter, Request, Response>({
    router: options.router,
    createContext: ({ req, res }) => options.createContext({ req, res }),
    maxBodySize: options.maxBodySize,
    onError: ({ error, req }) => {
      const wire = toWireError(error);
      (req as RestRequest).wireError = wire;
      logServerFault((req as Request).log, error, wire);
    },
    responseMeta: ({ paths, errors }) => {
      const firstError = errors[0];
      if (firstError) return failureAnswerFor(toWireError(firstError).code);
      return { status: successStatuses.get(paths?.[0] ?? '') ?? 200 };
    },
  });

  return (req: Request, res: Response, next: NextFunction) => {
    // HEAD asks what GET would answer: the procedure runs as for GET, and Node sends no body for a
    // response to HEAD (the response was made for a HEAD request; the method it routes by does not change that).
    const method = req.method;
    const routedMethod = method === 'HEAD' ? 'GET' : method;
    const queryStart = req.url.indexOf('?');
    const queryRefusal = refuseQuery(routedMethod, req.path, queryStart === -1 ? '' : req.url.slice(queryStart + 1));
    if (queryRefusal) return sendSurfaceError(req, res, queryRefusal);
    req.method = routedMethod;
    if (readsBody(routedMethod)) {
      const refusal = bodyRefusal(req);
      if (refusal) return sendSurfaceError(req, res, refusal);
    }
    const originalEnd = res.end.bind(res) as (...args: unknown[]) => Response;
    const requestId = String(res.locals.requestId ?? '');
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      res.end = originalEnd as Response['end'];
      if (res.statusCode === 204) return originalEnd(undefined, ...rest);
      const wire = (req as RestRequest).wireError;
      if (wire) {
        return originalEnd(JSON.stringify(options.surface.failureBody(wire, requestId)), ...rest);
      }
      return originalEnd(options.surface.successBody(typeof chunk === 'string' ? chunk : undefined, requestId), ...rest);
    }) as Response['end'];
    void handler(req, res, () => {
      res.end = originalEnd as Response['end'];
      req.method = method;
      next();
    });
  };
}

/**
 * Why the body of a POST/PUT/PATCH cannot be taken, if it cannot; readies one that can for the
 * projection. No body at all (`curl -X POST …/revoke`) means "no fields". Otherwise it is JSON and
 * says so: the operations declare `application/json` only, and a type that merely starts like it
 * (`application/json-patch+json`) is not read by the body parser, so it would reach the procedure
 * as no fields and "succeed" having changed nothing. And it is an object: its fields sit beside the
 * path parameters, which a JSON array has none of.
 */
function bodyRefusal(req: Request): WireError | undefined {
  const contentType = req.headers['content-type'];
  if (contentType === undefined && !hasBody(req)) {
    req.body = {};
  } else if (contentType === undefined) {
    return { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'A body needs Content-Type: application/json' };
  } else if (!typeis.is(contentType, ['application/json'])) {
    return unsupportedContentType(contentType);
  }
  if (Array.isArray(req.body)) return { code: 'VALIDATION_ERROR', message: 'The request body must be a JSON object' };
  // express.json read the body (media types ignore case); the projection compares the header as
  // written, so it gets the canonical spelling.
  req.headers['content-type'] = 'application/json';
  return undefined;
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}
