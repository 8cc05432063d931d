import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { errorCodes } from '../errors/error-catalog.ts';
import type { AppRouter } from '../router.ts';
import { SERVICE_VERSION } from '../version.ts';
import { successStatusByProcedurePath } from './procedure-meta.ts';

const DESCRIPTION = [
  'Specwright turns a product idea into a software specification and then into generated artifacts:',
  'projects move through guided discovery, feature selection, planning and specification; AI agents draft',
  'the specification under token and cost budgets; kits turn a project into validated, bundled files.',
  '',
  'Every response is an envelope: `{success: true, data, metadata}` or `{success: false, error: {code, message, details?}, metadata}`.',
  'Authenticate with `X-API-Key: <key>` or `Authorization: Bearer <jwt>`.',
].join('\n');

type SchemaObject = NonNullable<NonNullable<OpenAPIObject['components']>['schemas']>[string];

const metadataSchema: SchemaObject = {
  type: 'object',
  required: ['timestamp', 'requestId'],
  properties: { timestamp: { type: 'string', format: 'date-time' }, requestId: { type: 'string' } },
};

const errorEnvelopeSchema: SchemaObject = {
  type: 'object',
  required: ['success', 'error', 'metadata'],
  properties: {
    success: { type: 'boolean', enum: [false] },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: errorCodes },
        message: { type: 'string' },
        details: { type: 'object', additionalProperties: true },
      },
    },
    metadata: metadataSchema,
  },
};

type Operation = { responses?: Record<string, { content?: Record<string, { schema?: unknown }>; description?: string }> };

/**
 * The REST surface's OpenAPI document, generated from the router. The generator describes bare
 * bodies; this wraps each in the envelope the REST surface actually sends, with the real success
 * status, so the document tells the truth about the wire.
 */
export function buildOpenApiDocument(router: AppRouter, baseUrl: string): OpenAPIObject {
  const document = generateOpenApiDocument(router, {
    title: 'Specwright API',
    version: SERVICE_VERSION,
    description: DESCRIPTION,
    baseUrl,
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    },
  });
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ErrorEnvelope: errorEnvelopeSchema } };
  // trpc-to-openapi names each operation after its procedure path, dots turned to dashes.
  const statusByOperation = new Map([...successStatusByProcedurePath(router)].map(([path, status]) => [path.replace(/\./g, '-'), status]));
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(pathItem as Record<string, Operation & { operationId?: string; security?: unknown[] }>)) {
      if (!operation?.responses) continue;
      if (operation.security) operation.security = [{ bearerAuth: [] }, { apiKeyAuth: [] }];
      wrapResponses(operation, statusByOperation.get(operation.operationId ?? '') ?? 200);
    }
  }
  return document;
}

function wrapResponses(operation: Operation, successStatus: number): void {
  const responses: NonNullable<Operation['responses']> = {};
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const json = response.content?.['application/json'];
    if (status === '200') {
      const data = json?.schema ?? {};
      responses[String(successStatus)] = {
        ...response,
        content: {
          'application/json': {
            schema: { type: 'object', required: ['success', 'data', 'metadata'], properties: { success: { type: 'boolean', enum: [true] }, data, metadata: metadataSchema } },
          },
        },
      };
    } else {
      responses[status] = { ...response, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } };
    }
  }
  operation.responses = responses;
}
