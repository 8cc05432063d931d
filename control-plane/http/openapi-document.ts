import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { errorCodes } from '../errors/error-catalog.ts';
import { SERVICE_VERSION } from '../version.ts';
import { AUTHENTICATION_CHALLENGE } from './failure-answer.ts';
import { bodyOptionalProcedurePaths, credentialsOptionalProcedurePaths, errorResponsesByProcedurePath, inputDefaultsByProcedurePath, strictInputProcedurePaths, successStatusByProcedurePath } from './procedure-meta.ts';
import { ACCEPTABLE_REQUEST_ID } from './request-id.ts';

const DESCRIPTION = [
  'Specwright turns a product idea into a software specification and then into generated artifacts:',
  'projects move through guided discovery, feature selection, planning and specification; AI agents draft',
  'the specification under token and cost budgets; kits turn a project into validated, bundled files.',
  '',
  'Every response is an envelope: `{success: true, data, metadata}` or `{success: false, error: {code, message, details?}, metadata}`.',
  'Authenticate with `X-API-Key: <key>` or `Authorization: Bearer <jwt>`.',
  '',
  'A path listed here, asked with a method it does not list, answers 405 METHOD_NOT_ALLOWED with `Allow` naming the methods it takes (HEAD wherever GET is).',
].join('\n');

const VARIANT_A_DESCRIPTION = [
  'Variant A of the Specwright API: the same projects, seen as plain resources. Bodies are bare: a',
  'resource, a list `{items, total, page, pageSize}` (query `page`, `pageSize`, `sort`, `order`), or an',
  'error `{code, message, details?}` with the codes of Variant B (`/api`, the envelope surface, whose',
  'document is `/api/openapi.json`). Creates answer 201, deletes 204; PUT replaces, PATCH changes the',
  'fields sent. A project\'s `status` is read from its phase, and writing it moves the flow forward.',
  'Authenticate with `X-API-Key: <key>` or `Authorization: Bearer <jwt>`; the request id is in X-Request-ID.',
  '',
  'A path listed here, asked with a method it does not list, answers 405 METHOD_NOT_ALLOWED with `Allow` naming the methods it takes (HEAD wherever GET is).',
].join('\n');

/** The two REST surfaces' documents (DESIGN §5.1): B's envelope at /api, A's bare bodies at /api/basic. */
export type DocumentVariant = 'A' | 'B';

type SchemaObject = NonNullable<NonNullable<OpenAPIObject['components']>['schemas']>[string];

const metadataSchema: SchemaObject = {
  type: 'object',
  required: ['timestamp', 'requestId'],
  properties: { timestamp: { type: 'string', format: 'date-time' }, requestId: { type: 'string' } },
};

/** An error as Variant A sends it, and as Variant B's envelope carries it. */
const errorSchema: SchemaObject = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', enum: errorCodes },
    message: { type: 'string' },
    details: { type: 'object', additionalProperties: true },
  },
};

const errorEnvelopeSchema: SchemaObject = {
  type: 'object',
  required: ['success', 'error', 'metadata'],
  properties: {
    success: { type: 'boolean', enum: [false] },
    error: errorSchema,
    metadata: metadataSchema,
  },
};

type Header = { description: string; required?: boolean; schema: { type: 'string' | 'integer'; pattern?: string } };
type Response = { content?: Record<string, { schema?: unknown }>; description?: string; headers?: Record<string, Header> };
type Operation = {
  operationId?: string;
  security?: unknown[];
  parameters?: Array<{ in: string; name?: string; required?: boolean; description?: string; schema?: unknown }>;
  requestBody?: unknown;
  responses?: Record<string, Response>;
};

const authenticated = [{ bearerAuth: [] }, { apiKeyAuth: [] }];
/** Public, but one of its modes acts as the caller (accepting an invitation as an existing user). */
const optionallyAuthenticated = [{}, ...authenticated];

const requestIdParameter = {
  in: 'header' as const,
  name: 'X-Request-ID',
  required: false,
  description: 'Your id for this request (1–128 of A-Z a-z 0-9 . _ : -), echoed in the answer; one is made up when absent',
  schema: { type: 'string' as const, pattern: ACCEPTABLE_REQUEST_ID.source },
};
const tenantParameter = {
  in: 'header' as const,
  name: 'X-Tenant-ID',
  required: false,
  description: 'Platform admins only: the tenant to act in (anyone else naming another tenant gets FORBIDDEN)',
  schema: { type: 'string' as const, format: 'uuid' },
};

/** Headers on every answer, and those a refusal adds. */
const answerHeaders: Record<string, Header> = {
  'X-Request-ID': { description: 'The request id (yours when sent, else made up); on Variant B also metadata.requestId', required: true, schema: { type: 'string' } },
  'X-RateLimit-Limit': { description: "Requests allowed per window in this request's rate-limit class", schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the window resets, in Unix seconds', schema: { type: 'integer' } },
};
const retryAfter: Header = { description: 'Seconds to wait before trying again', required: true, schema: { type: 'integer' } };
const refusalHeaders: Record<string, Header> = { ...answerHeaders, 'Retry-After': retryAfter };
const challengeHeaders: Record<string, Header> = {
  ...answerHeaders,
  'WWW-Authenticate': { description: `How to authenticate: \`${AUTHENTICATION_CHALLENGE}\` (or send X-API-Key)`, required: true, schema: { type: 'string' } },
};

/** What each failure status means on this surface, unless a procedure's meta says more. */
const errorDescriptions: Record<number, string> = {
  400: 'VALIDATION_ERROR (details.issues names each field, or each query parameter the operation does not take; or X-Tenant-ID is no uuid) or another 400 code of the catalog',
  401: 'UNAUTHORIZED: missing or invalid credentials',
  403: 'FORBIDDEN or ORG_NOT_MEMBER: the caller may not do this',
  404: 'NOT_FOUND: no such resource visible to the caller (or no tenant with the id X-Tenant-ID names)',
  409: 'CONFLICT: the resource is not in a state that allows this',
  413: 'PAYLOAD_TOO_LARGE: the body exceeds the size limit',
  415: 'UNSUPPORTED_MEDIA_TYPE: send Content-Type: application/json',
  429: 'RATE_LIMITED: too many requests; retry after Retry-After seconds',
  500: 'INTERNAL_ERROR: unexpected; quote the request id (X-Request-ID)',
  503: 'SERVICE_UNAVAILABLE: the database cannot be reached, or the request kept colliding with concurrent ones and changed nothing; try again shortly',
};

/**
 * A REST surface's OpenAPI document, generated from its router. The generator describes bare
 * bodies; this gives each the shape the surface actually sends (Variant B: in its envelope) with the
 * real success status, so the document tells the truth about the wire.
 */
export function buildOpenApiDocument(router: AnyRouter, baseUrl: string, variant: DocumentVariant = 'B'): OpenAPIObject {
  const document = generateOpenApiDocument(router, {
    title: variant === 'B' ? 'Specwright API' : 'Specwright API (Variant A)',
    version: SERVICE_VERSION,
    description: variant === 'B' ? DESCRIPTION : VARIANT_A_DESCRIPTION,
    baseUrl,
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    },
  });
  // The generator's `error.*` schemas describe trpc-to-openapi's bare error body, which this surface never sends.
  const generatedSchemas = Object.entries(document.components?.schemas ?? {}).filter(([name]) => !name.startsWith('error.'));
  const errorSchemas: Record<string, SchemaObject> = variant === 'B' ? { ErrorEnvelope: errorEnvelopeSchema } : { Error: errorSchema };
  document.components = { ...document.components, schemas: { ...Object.fromEntries(generatedSchemas), ...errorSchemas } };
  // trpc-to-openapi names each operation after its procedure path, dots turned to dashes.
  const operationIdOf = (path: string) => path.replace(/\./g, '-');
  const byOperationId = <T>(byPath: Map<string, T>) => new Map([...byPath].map(([path, value]) => [operationIdOf(path), value]));
  const operationIds = (paths: Set<string>) => new Set([...paths].map(operationIdOf));
  const statusByOperation = byOperationId(successStatusByProcedurePath(router));
  const errorsByOperation = byOperationId(errorResponsesByProcedurePath(router));
  const strictOperations = operationIds(strictInputProcedurePaths(router));
  const optionalOperations = operationIds(credentialsOptionalProcedurePaths(router));
  const bodyOptionalOperations = operationIds(bodyOptionalProcedurePaths(router));
  const defaultsByOperation = byOperationId(inputDefaultsByProcedurePath(router));
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(pathItem as Record<string, Operation>)) {
      if (!operation?.responses) continue;
      const operationId = operation.operationId ?? '';
      const declaredErrors = errorsByOperation.get(operationId);
      if (operation.security) operation.security = authenticated;
      else if (optionalOperations.has(operationId)) operation.security = optionallyAuthenticated;
      const requestBody = operation.requestBody as { required?: boolean; content?: Record<string, { schema?: { type?: string; additionalProperties?: unknown; properties?: Record<string, unknown> } }> } | undefined;
      const body = requestBody?.content?.['application/json']?.schema;
      if (body?.type === 'object' && strictOperations.has(operationId)) body.additionalProperties = false;
      if (variant === 'A' && body?.type === 'object' && (method === 'put' || method === 'patch')) acceptOwnIdInBody(operation, body);
      // The generator calls every body required; one whose fields are all optional may be left out.
      if (requestBody && bodyOptionalOperations.has(operationId)) requestBody.required = false;
      documentQueryDefaults(operation, defaultsByOperation.get(operationId) ?? {});
      describeParameters(operation);
      describeResponses(variant, operation, statusByOperation.get(operationId) ?? 200, errorStatuses(method, operation, declaredErrors));
      operation.parameters = [...(operation.parameters ?? []), ...(operation.security ? [tenantParameter] : []), requestIdParameter];
    }
  }
  if (variant === 'B') document.paths = { ...document.paths, '/downloads/{token}': { get: downloadOperation(), head: downloadHeadOperation() } };
  return document;
}

/**
 * Variant A's PUT and PATCH take the resource as an answer carries it, its `id` included (see
 * variant-a-routes.ts): the body may name the path's id, which the generator leaves out of it.
 */
function acceptOwnIdInBody(operation: Operation, body: { properties?: Record<string, unknown> }): void {
  const pathId = operation.parameters?.find((parameter) => 'in' in parameter && parameter.in === 'path' && parameter.name === 'id');
  if (!pathId || !('schema' in pathId) || body.properties?.id) return;
  const schema = { ...(pathId.schema as object), description: "The path's id, as an answer carries it (any letter case); another id is VALIDATION_ERROR" };
  body.properties = { id: schema, ...body.properties };
}

/** Gives each query parameter whose field has a default (`limit` 50) that default, where the generator left it out. */
function documentQueryDefaults(operation: Operation, defaults: Record<string, unknown>): void {
  for (const parameter of operation.parameters ?? []) {
    const name = 'in' in parameter && parameter.in === 'query' ? parameter.name : undefined;
    if (name === undefined || !(name in defaults)) continue;
    const schema = (parameter.schema ?? {}) as { default?: unknown };
    if (schema.default === undefined) parameter.schema = { ...schema, default: defaults[name] };
  }
}

/**
 * Gives each parameter the description its field carries: the generator leaves it inside the
 * parameter's schema, where documentation tools (Swagger UI's parameter table, generated clients'
 * doc comments) do not look.
 */
function describeParameters(operation: Operation): void {
  for (const parameter of operation.parameters ?? []) {
    const described = (parameter.schema ?? {}) as { description?: unknown };
    if (parameter.description === undefined && typeof described.description === 'string') parameter.description = described.description;
  }
}

/** The one route outside the router: the bytes behind a signed download link (http/downloads.ts). */
const downloadRoute = () => ({
  summary: 'The file a download link names (an execution bundle ZIP)',
  description:
    'No other authentication: the signed link, handed out by GET …/bundle and valid for 15 minutes, is the credential. It serves only while the user it was handed to may still read the bundle (a member or above of its organization, kits enabled for the tenant, and the API key they asked with not revoked).',
  tags: ['kits'],
  parameters: [{ in: 'path' as const, name: 'token', required: true, schema: { type: 'string' as const } }, requestIdParameter],
});

/** What each failure of the download route means, for GET and HEAD alike. */
const downloadFailures = {
  '400': { description: 'VALIDATION_ERROR: the link is not valid URL encoding, or the query names a parameter (this operation takes none)', headers: answerHeaders },
  '403': { description: 'FORBIDDEN: the link was altered or has expired, or the user it was handed to may no longer read the bundle', headers: answerHeaders },
  '404': { description: 'NOT_FOUND: the file behind the link no longer exists', headers: answerHeaders },
  '429': { description: `${errorDescriptions[429]}; also when this address has 2 downloads running`, headers: refusalHeaders },
  '500': { description: errorDescriptions[500]!, headers: answerHeaders },
  '503': { description: `${errorDescriptions[503]}; also when 6 downloads are running`, headers: refusalHeaders },
};

function downloadOperation() {
  const inEnvelope = (failure: Response) => ({ ...failure, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } });
  return {
    operationId: 'downloads-get',
    ...downloadRoute(),
    responses: {
      '200': {
        description: 'The file, with Content-Disposition (its name), Digest (sha-256), ETag (its sha-256 in quotes) and Accept-Ranges: bytes',
        content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
        headers: answerHeaders,
      },
      '206': {
        description: 'One byte range of the file (Range: bytes=…; an If-Range other than the ETag gets the whole file), with Content-Range',
        content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
        headers: answerHeaders,
      },
      '400': inEnvelope(downloadFailures['400']),
      '403': inEnvelope(downloadFailures['403']),
      '404': inEnvelope(downloadFailures['404']),
      '416': { description: 'The range lies past the end of the file; Content-Range: bytes */<size>', headers: answerHeaders },
      '429': inEnvelope(downloadFailures['429']),
      '500': inEnvelope(downloadFailures['500']),
      '503': inEnvelope(downloadFailures['503']),
    },
  };
}

/**
 * HEAD of a download link (http/downloads.ts): the status and headers GET would answer, after the
 * same checks, without a body and without reading the file. A Range is not looked at: no 206 or 416.
 */
function downloadHeadOperation() {
  const withoutBody = (failure: Response) => ({ ...failure, description: `${failure.description}. No body: Content-Type and Content-Length are those of the envelope GET answers with` });
  return {
    operationId: 'downloads-head',
    ...downloadRoute(),
    summary: 'The headers of the file a download link names, without the file',
    responses: {
      '200': {
        description: "The headers GET's 200 carries, without the file: Content-Type (application/zip), Content-Length (the file's size), Content-Disposition (its name), Digest (sha-256), ETag (its sha-256 in quotes) and Accept-Ranges: bytes. A Range is not looked at",
        headers: answerHeaders,
      },
      ...Object.fromEntries(Object.entries(downloadFailures).map(([status, failure]) => [status, withoutBody(failure)])),
    },
  };
}

/**
 * The failures an operation can answer: those every operation of its kind can (rate limits, a query
 * parameter it does not take, authentication, input validation, body limits, lookups by path), plus those its procedure's meta
 * names in `openapi.errorResponses` (a conflict, a not-found on a create …).
 */
function errorStatuses(method: string, operation: Operation, declared = new Map<number, string | undefined>()): Map<number, string> {
  // 400 on every operation: a query parameter it does not declare is refused (declared-query.ts).
  const statuses = new Set([400, 429, 500, 503, ...declared.keys()]);
  const hasInput = Boolean(operation.parameters?.length || operation.requestBody);
  // Authenticated calls can be refused the caller, and a platform admin's X-Tenant-ID can be no
  // tenant id (400) or name no tenant (404).
  if (operation.security) [401, 403, 404].forEach((status) => statuses.add(status));
  if (operation.parameters?.some((parameter) => parameter.in === 'path') || (hasInput && method !== 'post')) statuses.add(404);
  // Every POST, PUT and PATCH body goes through the JSON parser, with its size limit.
  if (['post', 'put', 'patch'].includes(method)) [400, 413, 415].forEach((status) => statuses.add(status));
  return new Map([...statuses].sort((a, b) => a - b).map((status) => [status, declared.get(status) ?? errorDescriptions[status] ?? 'An error of the catalog']));
}

/**
 * The operation's answers as its surface sends them: on Variant B the data inside the success
 * envelope and failures as ErrorEnvelope; on Variant A the data bare (a 204 with no body) and
 * failures as Error.
 */
function describeResponses(variant: DocumentVariant, operation: Operation, successStatus: number, errors: Map<number, string>): void {
  const success = operation.responses?.['200'];
  const data = success?.content?.['application/json']?.schema ?? {};
  const successSchema =
    variant === 'B'
      ? { type: 'object', required: ['success', 'data', 'metadata'], properties: { success: { type: 'boolean', enum: [true] }, data, metadata: metadataSchema } }
      : data;
  const responses: NonNullable<Operation['responses']> = {
    [String(successStatus)]: {
      description: success?.description ?? 'Successful response',
      ...(successStatus === 204 ? {} : { content: { 'application/json': { schema: successSchema } } }),
      headers: answerHeaders,
    },
  };
  const errorRef = { $ref: `#/components/schemas/${variant === 'B' ? 'ErrorEnvelope' : 'Error'}` };
  for (const [status, description] of errors) {
    const headers = status === 429 || status === 503 ? refusalHeaders : status === 401 ? challengeHeaders : answerHeaders;
    responses[String(status)] = { description, content: { 'application/json': { schema: errorRef } }, headers };
  }
  operation.responses = responses;
}

/**
 * Each operation of the document: its method (upper case), path template, declared query
 * parameters, and those of them that are lists (`type: array`, which may be given more than once).
 */
/** One operation of the document: its method, path template and the query parameters it declares (`listNames`: those that take several values). */
export type DocumentOperation = { method: string; template: string; queryNames: Set<string>; listNames: Set<string> };

export function operationsOf(document: OpenAPIObject): DocumentOperation[] {
  return Object.entries(document.paths ?? {}).flatMap(([template, pathItem]) =>
    (['get', 'put', 'post', 'delete', 'patch'] as const).flatMap((method) => {
      const operation = pathItem[method];
      if (!operation) return [];
      const query = (operation.parameters ?? []).flatMap((parameter) => ('in' in parameter && parameter.in === 'query' ? [parameter] : []));
      const isList = (parameter: (typeof query)[number]) => (parameter.schema as { type?: unknown } | undefined)?.type === 'array';
      return [{ method: method.toUpperCase(), template, queryNames: new Set(query.map((parameter) => parameter.name)), listNames: new Set(query.filter(isList).map((parameter) => parameter.name)) }];
    }),
  );
}

/** The names the document declares as query parameters of any operation (`status`, `limit`, …). */
export function queryParameterNamesOf(document: OpenAPIObject): Set<string> {
  return new Set(operationsOf(document).flatMap((operation) => [...operation.queryNames]));
}
