import express, { type Request, type Response } from 'express';
import { getPathRegExp, normalizePath, type OpenAPIObject } from 'trpc-to-openapi';
import { basicRouter } from '../basic/basic-router.ts';
import type { Context } from '../trpc/context.ts';
import { methodRefusal } from './allowed-methods.ts';
import { refuseMisshapenBodies } from './body-shape.ts';
import { jsonBody } from './json-body.ts';
import { createRestHandler } from './rest-handler.ts';
import { variantA } from './rest-surface.ts';
import { noRouteFor, sendSurfaceError } from './surface-errors.ts';
import { closeUnlessDrainable } from './unread-body.ts';

/**
 * Variant A (DESIGN §5.1), mounted at /api/basic after authentication and rate counting: its
 * document, its methods (405 with Allow), JSON bodies, the projection of the basic router with bare
 * bodies, and NOT_FOUND in its own error shape for any path it does not have.
 */
export function variantARoutes(options: { createContext: (opts: { req: Request; res: Response }) => Context; bodyLimitBytes: number; document: OpenAPIObject }): express.Router {
  const routes = express.Router();
  const refuseMethod = methodRefusal(options.document, { '/openapi.json': ['GET'] });
  routes.use((req, res, next) => {
    const refusal = refuseMethod(req.method, req.path);
    if (!refusal) return next();
    closeUnlessDrainable(req, res, options.bodyLimitBytes);
    res.setHeader('Allow', refusal.allow);
    sendSurfaceError(req, res, refusal.error);
  });
  routes.get('/openapi.json', (_req, res) => void res.json(options.document));
  routes.use(jsonBody({ limit: options.bodyLimitBytes }), refuseMisshapenBodies, acceptOwnIdInBody(options.document));
  routes.use(createRestHandler({ router: basicRouter, surface: variantA, createContext: options.createContext, maxBodySize: options.bodyLimitBytes, document: options.document }));
  routes.use((req, res) => sendSurfaceError(req, res, noRouteFor(req)));
  return routes;
}

/**
 * A's PUT body is the resource's Input shape, id included, so an answer can be sent back as it
 * came: an `id` equal to the path's (in any letter case) is taken as the path's and dropped from
 * the body (the projection refuses a field that shadows a path parameter); another one is refused,
 * since the path names the resource changed. Only on a path the document serves as `/…/{id}` for
 * the method: any other path is left to the router (NOT_FOUND), and a path that is not valid URL
 * encoding to the projection, which says so.
 */
function acceptOwnIdInBody(document: OpenAPIObject) {
  const idPaths = Object.entries(document.paths ?? {}).flatMap(([template, pathItem]) =>
    template.includes('{id}') ? (['PUT', 'PATCH'] as const).filter((method) => pathItem[method.toLowerCase() as 'put' | 'patch']).map((method) => ({ method, pattern: getPathRegExp(normalizePath(template)) })) : [],
  );
  return (req: Request, res: Response, next: () => void): void => {
    if (req.method !== 'PUT' && req.method !== 'PATCH') return next();
    const body = req.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body) || !Object.hasOwn(body, 'id')) return next();
    const routed = normalizePath(req.path);
    const pathId = idPaths.find((path) => path.method === req.method && path.pattern.test(routed))?.pattern.exec(routed)?.groups?.id;
    if (pathId === undefined) return next();
    const decoded = decodeOrUndefined(pathId);
    if (decoded === undefined) return next();
    if (typeof body.id === 'string' && body.id.toLowerCase() === decoded.toLowerCase()) {
      delete body.id;
      return next();
    }
    sendSurfaceError(req, res, { code: 'VALIDATION_ERROR', message: 'id in the body must be the id in the path', details: { issues: [{ field: 'id', issue: 'must be the id in the path' }] } });
  };
}

function decodeOrUndefined(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
