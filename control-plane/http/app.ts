import type { IncomingMessage } from 'node:http';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import type { Kysely } from 'kysely';
import { pinoHttp } from 'pino-http';
import swaggerUi from 'swagger-ui-express';
import { requirePrincipal, type AuthOutcome, type Authenticator } from '../auth/authenticate.ts';
import type { SessionTokens } from '../auth/session-token.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { isDatabaseUnavailable } from '../db/postgres-errors.ts';
import type { StatementBatches } from '../db/statement-batches.ts';
import { HealthWaitOutlasted, withinHealthWait } from '../domains/health/health-wait.ts';
import type { CredentialKeyMaker } from '../domains/kit-credentials/credential-key-ring.ts';
import type { LoginThrottle } from '../domains/users/login-throttle.ts';
import { logServerFault, toWireError } from '../errors/coerce-error.ts';
import { retryAfterFor } from '../errors/error-catalog.ts';
import type { Logger } from '../logger.ts';
import { appRouter } from '../router.ts';
import { contextFactory } from '../trpc/context.ts';
import { rememberRequestId } from '../trpc/init.ts';
import { requestLogSerializer } from './log-redaction.ts';
import { bodyReadFailure } from './body-read-errors.ts';
import { refuseMisshapenBodies } from './body-shape.ts';
import type { DownloadLinks } from './download-links.ts';
import { queryParameterRefusal } from './declared-query.ts';
import { methodRefusal } from './allowed-methods.ts';
import { crossOriginAccess } from './cross-origin-access.ts';
import { createDownloadHandler } from './downloads.ts';
import { failureAnswerFor } from './failure-answer.ts';
import { isHealthCheckPath } from './health-check-path.ts';
import { buildOpenApiDocument, queryParameterNamesOf } from './openapi-document.ts';
import { createRequestCounter, rateLimitCallerAfter, rateLimitCallerKey } from './rate-limit.ts';
import { requestIdFor } from './request-id.ts';
import { securityHeaders } from './security-headers.ts';
import { jsonBody, unsupportedContentType } from './json-body.ts';
import { createRestHandler } from './rest-handler.ts';
import { VARIANT_A_BASE, variantB } from './rest-surface.ts';
import { variantARoutes } from './variant-a-routes.ts';
import { basicRouter } from '../basic/basic-router.ts';
import { noRouteFor, sendSurfaceError } from './surface-errors.ts';
import { closeUnlessDrainable } from './unread-body.ts';
import { MAX_TRPC_BATCH_SIZE } from './trpc-path.ts';

export interface AppDeps {
  config: Config;
  db: Kysely<Database>;
  /** Single statements outside any transaction (rate and sign-in counts), sent in batches. */
  batches: StatementBatches;
  log: Logger;
  authenticator: Authenticator;
  /** Signs the session tokens handed out at sign-in (the authenticator verifies them). */
  sessionTokens: SessionTokens;
  downloadLinks: DownloadLinks;
  /** Counts failed sign-ins, keyed by a SERVER_SECRET-derived HMAC (login-throttle.ts). */
  loginThrottle: LoginThrottle;
  /** Makes an organization's first credential key, its private key sealed at once. */
  credentialKeys: CredentialKeyMaker;
}

const header = (req: Request, name: string) => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy);
  app.use(securityHeaders);
  const createContext = contextFactory({ db: deps.db, config: deps.config, sessionTokens: deps.sessionTokens, loginThrottle: deps.loginThrottle, downloadLinks: deps.downloadLinks, credentialKeys: deps.credentialKeys });
  const openApiDocument = buildOpenApiDocument(appRouter, '/api');
  const basicDocument = buildOpenApiDocument(basicRouter, VARIANT_A_BASE, 'A');

  app.use(
    pinoHttp({
      logger: deps.log,
      genReqId: (req, res) => {
        const requestId = requestIdFor(req);
        res.setHeader('X-Request-ID', requestId);
        (res as Response).locals.requestId = requestId;
        return requestId;
      },
      customAttributeKeys: { reqId: 'requestId' },
      serializers: { req: requestLogSerializer(new Set([...queryParameterNamesOf(openApiDocument), ...queryParameterNamesOf(basicDocument)])) },
      quietReqLogger: true,
    }),
  );

  // Before authentication and counting: a browser sends its preflight without the caller's credentials.
  const allowCrossOrigin = crossOriginAccess(deps.config);
  if (allowCrossOrigin) app.use(['/api', '/trpc'], allowCrossOrigin);

  // Answers are per caller, and some carry a secret shown once (a new key, a session token): no
  // cache may keep one. Set first, so refusals (401, 429, 404) say it too.
  app.use(['/api', '/trpc'], (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  // Authentication and rate counting are independent round trips: run them side by side, except
  // for a bearer token, which counts against its user and so waits for authentication.
  const countRequest = createRequestCounter(deps.batches, deps.config.rateLimits);
  const admit = async (req: express.Request) => {
    const callerKey = rateLimitCallerKey(req);
    const [auth, countedBefore] = await Promise.all([
      deps.authenticator.authenticate({
        authorization: header(req, 'authorization'),
        apiKey: header(req, 'x-api-key'),
        tenantId: header(req, 'x-tenant-id'),
        e2eTestMode: header(req, 'x-e2e-test-mode'),
      }),
      callerKey === undefined ? undefined : countRequest(req, callerKey),
    ]);
    const countedAs = rateLimitCallerAfter(req, auth, callerKey);
    if (countedAs === callerKey && countedBefore) return { auth, applyRateVerdict: countedBefore.apply };
    // Counted before authentication under a caller it turned out not to be (a key that does not
    // authenticate): that count is taken back as the right caller's is made.
    const [counted] = await Promise.all([countRequest(req, countedAs), countedBefore?.withdraw()]);
    return { auth, applyRateVerdict: counted.apply };
  };
  app.use(async (req, res, next) => {
    const isHealth = isHealthCheckPath(req.path);
    try {
      const { auth, applyRateVerdict } = await (isHealth ? withinHealthWait(admit(req)) : admit(req));
      res.locals.auth = auth;
      applyRateVerdict(res, next);
    } catch (error) {
      // Health must answer most when the database does not (refuses, or does not answer in time):
      // unauthenticated and uncounted then, and its own check reports the database.
      if (isHealth && (isDatabaseUnavailable(error) || error instanceof HealthWaitOutlasted)) {
        res.locals.auth = { kind: 'anonymous' } satisfies AuthOutcome;
        return next();
      }
      next(error);
    }
  });

  // Variant A under /api/basic, whole: none of its paths reaches Variant B's handlers below.
  app.use(VARIANT_A_BASE, variantARoutes({ createContext, bodyLimitBytes: deps.config.bodyLimitBytes, document: basicDocument }));

  // A path the document lists, asked with a method it does not take, answers 405 with Allow: before
  // any body is read, so a POST to a download link is not refused for its media type.
  const refuseMethod = methodRefusal(openApiDocument, { '/openapi.json': ['GET'] });
  app.use('/api', (req, res, next) => {
    const refusal = refuseMethod(req.method, req.path);
    if (!refusal) return next();
    closeUnlessDrainable(req, res, deps.config.bodyLimitBytes);
    res.setHeader('Allow', refusal.allow);
    sendSurfaceError(req, res, refusal.error);
  });
  app.get('/api/openapi.json', (_req, res) => void res.json(openApiDocument));
  const documents = [
    { url: '/api/openapi.json', name: 'Variant B (/api, envelope)' },
    { url: `${VARIANT_A_BASE}/openapi.json`, name: 'Variant A (/api/basic, bare bodies)' },
  ];
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(undefined, { swaggerOptions: { urls: documents }, customSiteTitle: 'Specwright API' }));

  // Its query is held to the document as every other operation's is (it takes none).
  const refuseQuery = queryParameterRefusal(openApiDocument);
  const refuseUndeclaredQuery = (req: Request, res: Response, next: () => void) => {
    const queryStart = req.url.indexOf('?');
    const refusal = refuseQuery('GET', req.path.slice('/api'.length), queryStart === -1 ? '' : req.url.slice(queryStart + 1));
    if (refusal) return sendSurfaceError(req, res, refusal);
    next();
  };
  app.get('/api/downloads/:token', refuseUndeclaredQuery, createDownloadHandler(deps.db, deps.downloadLinks));

  // Publishing a kit carries its files: that one route takes bodies up to the upload limit, and
  // parses them only for an authenticated caller. Anyone else is answered at once; the rest of a
  // body declared within the limit is read and dropped unparsed (see closeUnlessDrainable).
  const refuseUnauthenticatedUpload = refuseUnauthenticated(deps.config.uploadLimitBytes);
  app.post(/^\/api\/[0-9a-f-]{36}\/kits\/?$/i, refuseUnauthenticatedUpload, jsonBody({ limit: deps.config.uploadLimitBytes }));
  // The same procedure over tRPC (the SDK), called on its own.
  app.post('/trpc/kits.publish', refuseUnauthenticatedUpload, jsonBody({ limit: deps.config.uploadLimitBytes, type: isJsonOrUntyped }));
  app.use('/api', jsonBody({ limit: deps.config.bodyLimitBytes }), refuseMisshapenBodies);
  app.use('/api', createRestHandler({ router: appRouter, surface: variantB, createContext, maxBodySize: deps.config.bodyLimitBytes, document: openApiDocument }));

  // The adapter takes the procedure from the path's last segment, so `/trpc/anything/me.get` would
  // call me.get: a path under /trpc names procedures, or nothing.
  app.use('/trpc', (req, res, next) => {
    if (!req.path.slice(1).includes('/')) return next();
    sendSurfaceError(req, res, noRouteFor(req));
  });
  // tRPC reads a body that express has parsed (and treats one without a content type as JSON).
  app.use('/trpc', refuseUndecodablePath, refuseOtherMethods(deps.config.bodyLimitBytes), refuseOtherMediaTypes(deps.config.bodyLimitBytes), jsonBody({ limit: deps.config.bodyLimitBytes, type: isJsonOrUntyped }), refuseMisshapenBodies, labelUntypedBodyAsJson);
  app.use(
    '/trpc',
    createExpressMiddleware({
      router: appRouter,
      createContext,
      maxBodySize: deps.config.bodyLimitBytes,
      maxBatchSize: MAX_TRPC_BATCH_SIZE,
      onError: ({ error, req }) => {
        rememberRequestId(error, String(req.id));
        logServerFault(req.log, error);
      },
      // One call's failure answers the catalog's status for its code, as on /api (a method the
      // procedure does not take is NOT_FOUND, not tRPC's 405: a procedure is not an /api path with
      // methods); batches keep 207, with a Retry-After when one of their calls met a passing outage.
      responseMeta: ({ errors, paths }) => {
        const codes = errors.map((error) => toWireError(error).code);
        if (codes.length === 1 && (paths?.length ?? 1) <= 1) return failureAnswerFor(codes[0]!);
        const retryAfter = codes.map(retryAfterFor).find(Boolean);
        return retryAfter ? { headers: { 'Retry-After': retryAfter } } : {};
      },
    }),
  );

  app.use((req, res) => sendSurfaceError(req, res, noRouteFor(req)));
  app.use(errorHandler);
  return app;
}

/** Refuses an upload without credentials before its body is read or parsed. */
function refuseUnauthenticated(limitBytes: number) {
  return (req: Request, res: Response, next: () => void): void => {
    try {
      requirePrincipal(res.locals.auth as AuthOutcome);
    } catch (error) {
      closeUnlessDrainable(req, res, limitBytes);
      return sendSurfaceError(req, res, toWireError(error));
    }
    next();
  };
}

/** A path tRPC cannot decode answers as on /api; tRPC's own answer is text/plain, without the request id. */
function refuseUndecodablePath(req: Request, res: Response, next: () => void): void {
  try {
    decodeURIComponent(req.path);
  } catch {
    return sendSurfaceError(req, res, { code: 'VALIDATION_ERROR', message: 'The request path is not valid URL encoding' });
  }
  next();
}

/**
 * tRPC takes queries by GET and mutations by POST. Any other method is a route that does not exist,
 * NOT_FOUND (a procedure is not a resource with methods, as an /api path is: no 405 here) — tRPC
 * itself would answer 415 in text/plain for one without a JSON body, and 204 to any HEAD. A HEAD
 * answers what GET would, as on /api.
 */
function refuseOtherMethods(limitBytes: number) {
  return (req: Request, res: Response, next: () => void): void => {
    // As the REST handler does: the call runs as a GET, and Node sends no body for a response to a
    // HEAD request (the response was made for one). The request log keeps the method it came with.
    if (req.method === 'HEAD') req.method = 'GET';
    if (req.method === 'GET' || req.method === 'POST') return next();
    closeUnlessDrainable(req, res, limitBytes);
    sendSurfaceError(req, res, noRouteFor(req));
  };
}

/** A tRPC POST of another media type answers as on /api (tRPC's own message misquotes the type). */
function refuseOtherMediaTypes(limitBytes: number) {
  return (req: Request, res: Response, next: () => void): void => {
    if (req.method !== 'POST' || isJsonOrUntyped(req)) return next();
    closeUnlessDrainable(req, res, limitBytes);
    sendSurfaceError(req, res, unsupportedContentType(req.headers['content-type']!));
  };
}

/** tRPC re-reads a parsed body as a fetch Request, which would label an untyped one text/plain. */
function labelUntypedBodyAsJson(req: Request, _res: Response, next: () => void): void {
  if (req.method === 'POST' && req.headers['content-type'] === undefined) req.headers['content-type'] = 'application/json';
  next();
}

/**
 * Whether tRPC reads the body: one of no type (read as JSON), or of exactly application/json in any
 * letter case and with any parameters, as tRPC matches it. Not a JSON-like type
 * (`application/vnd.api+json`, `application/json-patch+json`): tRPC would refuse it in its own words.
 */
function isJsonOrUntyped(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  return type === undefined || type.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

/** Failures raised before a procedure runs: bodies too large or unreadable, or a bug in middleware. */
const errorHandler: ErrorRequestHandler = (error, req, res, _next) => {
  // The router could not decode a path parameter (`/api/downloads/%E0%A4%A`): the caller's mistake.
  // Checked first: the router marks it status 400, which bodyReadFailure would take for a body it
  // could not read. No error from reading a body (parse, inflate, size) is a URIError.
  if (error instanceof URIError) {
    return sendSurfaceError(req, res, { code: 'VALIDATION_ERROR', message: 'The request path is not valid URL encoding' });
  }
  const unreadable = bodyReadFailure(error, req);
  if (unreadable) return sendSurfaceError(req, res, unreadable);
  const wire = toWireError(error);
  logServerFault(req.log, error, wire);
  sendSurfaceError(req, res, wire);
};
