import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedOperations } from '../helpers/documented-operations.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
});
afterAll(() => app?.stop());

describe('GET /api/openapi.json', () => {
  it('is a valid OpenAPI document, generated from the router, with a real info block', async () => {
    const response = await call(app.url, '/api/openapi.json');
    expect(response.status).toBe(200);
    const document = response.body;
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeTruthy();
    expect(document.info.version).toBe('1.0.0');
    expect(document.info.description).toMatch(/specification/);
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/health', '/me', '/developer/api-keys', '/developer/api-keys/{keyId}', '/admin/tenants']));
  });

  it('describes the envelope and the real success status', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const create = document.paths['/developer/api-keys'].post;
    expect(Object.keys(create.responses)).toContain('201');
    expect(create.responses['201'].content['application/json'].schema.properties.data.properties.key).toBeDefined();
    expect(create.responses['400'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorEnvelope');
    expect(Object.keys(document.components.schemas).filter((name) => name.startsWith('error.'))).toEqual([]);
    expect(document.paths['/health'].get.security).toBeUndefined();
    expect(create.security).toEqual([{ bearerAuth: [] }, { apiKeyAuth: [] }]);
    // Public, but accepting as an existing user acts as the caller: credentials are optional.
    expect(document.paths['/customer-invitations/{token}/accept'].post.security).toEqual([{}, { bearerAuth: [] }, { apiKeyAuth: [] }]);
    expect(document.paths['/customer-invitations/{token}'].get.security).toBeUndefined();
    // Public and able to answer 401 (a wrong password), but it never acts as a signed-in caller.
    expect(document.paths['/auth/login'].post.security).toBeUndefined();
  });

  it('declares the headers DESIGN relies on: X-Request-ID both ways, X-Tenant-ID where credentials go, the rate-limit headers, Retry-After on 429 and 503', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const name = `${method} ${path}`;
        const headerParameters = (operation.parameters ?? []).filter((p: { in: string }) => p.in === 'header').map((p: { name: string }) => p.name);
        const expected = operation.security ? ['X-Tenant-ID', 'X-Request-ID'] : ['X-Request-ID'];
        if (JSON.stringify(headerParameters) !== JSON.stringify(expected)) missing.push(`${name}: header parameters ${headerParameters}`);
        for (const [status, response] of Object.entries(operation.responses as Record<string, { headers?: Record<string, { required?: boolean }> }>)) {
          if (!response.headers?.['X-Request-ID']?.required) missing.push(`${name} ${status}: X-Request-ID`);
          if (!response.headers?.['X-RateLimit-Remaining']) missing.push(`${name} ${status}: X-RateLimit-Remaining`);
          if ((status === '429' || status === '503') && !response.headers?.['Retry-After']?.required) missing.push(`${name} ${status}: Retry-After`);
        }
        if (operation.security && !operation.responses['404']) missing.push(`${name}: 404 for an unknown X-Tenant-ID`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('pages every list (DESIGN §4: limit, offset, and total in the answer)', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    // A path ending in an id reads one resource, whose arrays are its own (a kit's versions, an
    // execution's outputs); so does a bundle's description (the files of one execution), and an
    // agent execution's status (its agents and calls).
    const isOneResource = (path: string) => path.endsWith('}') || path.endsWith('/bundle') || /^\/agents\/execution\/\{executionId\}\/status$/.test(path);
    const unpaged: string[] = [];
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      const operation = operations.get;
      const data = operation?.responses['200']?.content?.['application/json']?.schema?.properties?.data;
      const arrays = Object.entries((data?.properties ?? {}) as Record<string, { type?: string }>).filter(([, schema]) => schema.type === 'array');
      if (arrays.length === 0 || isOneResource(path)) continue;
      const query = new Set((operation.parameters ?? []).filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name));
      if (!query.has('limit') || !query.has('offset') || !data.properties.total) unpaged.push(`GET ${path} (${arrays.map(([name]) => name)})`);
      // What leaving them out means: the first 50.
      const defaults = Object.fromEntries((operation.parameters ?? []).filter((p: { name: string }) => p.name === 'limit' || p.name === 'offset').map((p: { name: string; schema: { default?: number } }) => [p.name, p.schema.default]));
      if (defaults.limit !== 50 || defaults.offset !== 0) unpaged.push(`GET ${path} documents limit ${defaults.limit} and offset ${defaults.offset} by default`);
    }
    expect(unpaged).toEqual([]);
  });

  it("puts each parameter's description where documentation tools read it, on the parameter", async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const parameter = (path: string, name: string) => document.paths[path].get.parameters.find((p: { name: string }) => p.name === name);
    expect(parameter('/projects', 'status').description).toBe('One status, or all (the default)');
    expect(parameter('/flow/questions/{projectId}', 'phase').description).toMatch(/^Only this phase's questions/);
    expect(parameter('/{orgId}/kits/executions', 'projectId').description).toMatch(/^A project of this organization/);
    expect(parameter('/{orgId}/kits/credentials', 'kitId').description).toMatch(/^A kit the organization can run/);
    // Every parameter whose schema says something says it on the parameter too.
    const silent: string[] = [];
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const p of operation.parameters ?? []) if (p.schema?.description && p.description === undefined) silent.push(`${method.toUpperCase()} ${path} ${p.name}`);
      }
    }
    expect(silent).toEqual([]);
  });

  it('documents the 400 with which every operation refuses a query parameter it does not take', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const problems: string[] = [];
    const operations = documentedOperations<{ responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> }>(document);
    for (const { method, template, path, operation } of operations) {
      const response = await call(app.url, `${path}?notAParameter=1`, { method, apiKey: app.bootstrap.apiKey });
      // A HEAD answers GET's status and headers, without the body that names the parameter.
      if (method === 'HEAD') {
        if (response.status !== 400 || response.text !== '') problems.push(`${method} ${template}: answered ${response.status} ${response.text}`);
        if (!operation.responses['400'] || operation.responses['400'].content) problems.push(`${method} ${template}: documents no 400, or one with a body`);
        continue;
      }
      const outcome = [response.status, response.body?.error?.code, response.body?.error?.details?.issues];
      if (JSON.stringify(outcome) !== JSON.stringify([400, 'VALIDATION_ERROR', [{ field: 'notAParameter', issue: 'is not a field that can be set here' }]])) problems.push(`${method} ${template}: answered ${response.text}`);
      if (operation.responses['400']?.content?.['application/json']?.schema?.$ref !== '#/components/schemas/ErrorEnvelope') problems.push(`${method} ${template}: documents no 400 in the envelope`);
    }
    expect(operations.map(({ method, template }) => `${method} ${template}`)).toEqual(expect.arrayContaining(['GET /health', 'GET /downloads/{token}', 'HEAD /downloads/{token}']));
    expect(problems).toEqual([]);
  });

  it('says which bodies refuse unknown fields, and the server agrees on every operation', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const disagreements: string[] = [];
    let bodies = 0;
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { additionalProperties?: unknown } }> } }>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const schema = operation.requestBody?.content['application/json']?.schema;
        if (!schema) continue;
        bodies += 1;
        const filled = path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
        const response = await call(app.url, `/api${filled}`, { method: method.toUpperCase(), apiKey: app.bootstrap.apiKey, body: { zzUnknownField: 1 } });
        const refused = (response.body.error?.details?.issues ?? []).some((issue: { field: string }) => issue.field === 'zzUnknownField');
        if (refused !== (schema.additionalProperties === false)) disagreements.push(`${method} ${path}: document ${schema.additionalProperties === false ? 'refuses' : 'allows'}, server ${refused ? 'refuses' : 'allows'}`);
      }
    }
    expect(bodies).toBeGreaterThan(15);
    expect(disagreements).toEqual([]);
  });
});

describe('GET /docs', () => {
  it('serves an API docs page that loads nothing from the internet', async () => {
    const page = await fetch(`${app.url}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    expect(html).not.toMatch(/(src|href)="https?:\/\//);
    const init = await fetch(`${app.url}/docs/swagger-ui-init.js`);
    expect(await init.text()).toContain('/api/openapi.json');
    const bundle = await fetch(`${app.url}/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
  });

  it('may not be framed by another site, and runs only its own scripts', async () => {
    const page = await fetch(`${app.url}/docs/`);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("frame-ancestors 'self'");
    expect(policy).toContain("script-src 'self'");
    // Served over plain HTTP here, as npm start serves it: its assets must load by the same scheme.
    expect(policy).not.toContain('upgrade-insecure-requests');
    expect(page.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    // The policy allows no inline script: the page must have none, or it would not run.
    expect((await page.text()).match(/<script(?![^>]*\bsrc=)[^>]*>/g)).toBeNull();
  });
});

describe('security headers', () => {
  it('every answer tells browsers not to sniff its type, on /api, /trpc and refusals alike', async () => {
    const answers = await Promise.all([
      call(app.url, '/api/health'),
      call(app.url, '/api/me'),
      call(app.url, '/trpc/me.get', { apiKey: app.bootstrap.apiKey }),
      call(app.url, '/api/no-such-route'),
    ]);
    expect(answers.map((answer) => [answer.status, answer.headers.get('x-content-type-options')])).toEqual([
      [200, 'nosniff'],
      [401, 'nosniff'],
      [200, 'nosniff'],
      [404, 'nosniff'],
    ]);
  });
});
