import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody } from '../helpers/kit-fixtures.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** A body is read as sent: its JSON types are not converted, and a body that cannot be read is the caller's mistake. */
let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
});
afterAll(() => app?.stop());

const issueFields = (body: { error?: { details?: { issues?: Array<{ field: string }> } } }) => body.error?.details?.issues?.map((issue) => issue.field) ?? [];

describe('booleans in a body', () => {
  it('a string "false" is refused, never read as true (REST, then tRPC on the same procedure)', async () => {
    const tenant = await createTenant(app, 'Stringly');
    const features = `/api/admin/tenants/${tenant.tenantId}/features`;
    for (const sent of ['false', 'no', '0']) {
      const response = await call(app.url, features, { method: 'PATCH', apiKey: key, body: { kits_enabled: sent } });
      expect(response.status, response.text).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
      expect(issueFields(response.body)).toEqual(['kits_enabled']);
    }
    // The schema the REST call used is the one tRPC uses: it must not have learnt to convert either.
    const trpc = await call(app.url, '/trpc/admin.setTenantFeatures', { apiKey: key, body: { tenantId: tenant.tenantId, kits_enabled: 'false' } });
    expect(trpc.status, trpc.text).toBe(400);
    // Nothing was switched on.
    expect((await call(app.url, `/api/${tenant.organizationId}/kits`, { apiKey: tenant.apiKey })).status).toBe(403);
  });

  it('execution options take booleans only, and a refused execute leaves no execution', async () => {
    const project = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Options as sent' } });
    const orgId = app.bootstrap.organizationId;
    const execute = await call(app.url, `/api/${orgId}/kits/openapi-api/execute`, {
      apiKey: key,
      body: { ...sampleExecutionBody(project.body.data.id), options: { dryRun: 'false', skipApply: 'false' } },
    });
    expect(execute.status, execute.text).toBe(400);
    expect(issueFields(execute.body).sort()).toEqual(['options.dryRun', 'options.skipApply']);
    const executions = await call(app.url, `/api/${orgId}/kits/executions?projectId=${project.body.data.id}`, { apiKey: key });
    expect(executions.body.data.total).toBe(0);
  });
});

describe('a body that is not an object', () => {
  it('is refused where the route takes fields, even when every field is optional', async () => {
    const project = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Array body' } });
    const path = `/api/projects/${project.body.data.id}`;
    for (const rawBody of ['[]', '[{"name":"renamed"}]']) {
      const response = await call(app.url, path, { method: 'PATCH', apiKey: key, rawBody, headers: { 'content-type': 'application/json' } });
      expect(response.status, response.text).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: 'The request body must be a JSON object' });
    }
    for (const rawBody of ['null', '"a name"', '42']) {
      const scalar = await call(app.url, '/api/projects', { apiKey: key, rawBody, headers: { 'content-type': 'application/json' } });
      expect([scalar.status, scalar.body.error.message], rawBody).toEqual([400, 'The request body is not a JSON object']);
    }
    for (const rawBody of ['{"name": ', '{name: "x"}', "{'name': 'x'}"]) {
      const broken = await call(app.url, '/api/projects', { apiKey: key, rawBody, headers: { 'content-type': 'application/json' } });
      expect([broken.status, broken.body.error.message], rawBody).toEqual([400, 'The request body is not valid JSON']);
    }
    const create = await call(app.url, '/api/projects', { apiKey: key, rawBody: '[]', headers: { 'content-type': 'application/json' } });
    expect(create.status).toBe(400);
    expect(create.body.error.message).toBe('The request body must be a JSON object');
    expect((await call(app.url, path, { apiKey: key })).body.data.name).toBe('Array body');
  });
});

describe('a body whose bytes are not valid UTF-8', () => {
  // {"name":"<bytes>","password":"<bytes>"}: decoding would make each bad byte U+FFFD without a word.
  const withBytes = (bytes: number[]) => new Uint8Array([...Buffer.from('{"name":"'), ...bytes, ...Buffer.from('","password":"'), ...bytes, ...Buffer.from('pass-word-1"}')]);
  const json = { 'content-type': 'application/json' };

  it('is refused on REST, tRPC and public routes, and nothing is stored', async () => {
    const before = (await call(app.url, '/api/projects?limit=1', { apiKey: key })).body.data.total;
    for (const bytes of [[0xff, 0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      for (const path of ['/api/projects', '/trpc/projects.create', '/api/auth/login']) {
        const response = await call(app.url, path, { method: 'POST', apiKey: key, rawBody: withBytes(bytes), headers: json });
        expect(response.status, `${path} ${bytes}: ${response.text}`).toBe(400);
        const code = path.startsWith('/trpc') ? response.body.error.data.code : response.body.error.code;
        expect([code, response.body.error.message]).toEqual(['VALIDATION_ERROR', 'The request body is not valid UTF-8']);
      }
    }
    expect((await call(app.url, '/api/projects?limit=1', { apiKey: key })).body.data.total).toBe(before);
  });

  it('while valid UTF-8 beyond ASCII, and a charset the body says it is in, are read as sent', async () => {
    const utf8 = await call(app.url, '/api/projects', { apiKey: key, rawBody: Buffer.from('{"name":"Écoles – 北"}'), headers: json });
    expect([utf8.status, utf8.body.data?.name]).toEqual([201, 'Écoles – 北']);
    const utf16 = await call(app.url, '/api/projects', { apiKey: key, rawBody: Buffer.from('{"name":"Café 北"}', 'utf16le'), headers: { 'content-type': 'application/json; charset=utf-16le' } });
    expect([utf16.status, utf16.body.data?.name]).toEqual([201, 'Café 北']);
  });
});

describe('a body on GET and DELETE', () => {
  it('is not read: its input is the path and query, so no size limit or syntax applies to what the route ignores', async () => {
    const project = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Deleted with a body' } });
    // fetch sends no body with a GET; node:http does.
    const listedStatus = await new Promise<number | undefined>((resolve, reject) => {
      const request = httpRequest(`${app.url}/api/projects`, { method: 'GET', headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': '4' } }, (response) => {
        response.resume();
        resolve(response.statusCode);
      });
      request.on('error', reject);
      request.end('{bad');
    });
    expect(listedStatus).toBe(200);
    const large = `{"padding":"${'x'.repeat(2 * 1024 * 1024)}"}`;
    const deleted = await call(app.url, `/api/projects/${project.body.data.id}`, { method: 'DELETE', apiKey: key, rawBody: large, headers: { 'content-type': 'application/json' } });
    expect(deleted.status, deleted.text).toBe(200);
    expect((await call(app.url, `/api/projects/${project.body.data.id}`, { apiKey: key })).status).toBe(404);
  });
});

describe('a body that does not match its Content-Encoding', () => {
  it.each(['gzip', 'deflate', 'br'])('%s: VALIDATION_ERROR on public, REST and tRPC routes, nothing stored', async (encoding) => {
    for (const path of ['/api/auth/login', '/api/projects', '/trpc/projects.create']) {
      const response = await call(app.url, path, { method: 'POST', apiKey: key, rawBody: 'hello', headers: { 'content-type': 'application/json', 'content-encoding': encoding } });
      expect(response.status, `${path}: ${response.text}`).toBe(400);
      const code = path.startsWith('/trpc') ? response.body.error.data.code : response.body.error.code;
      expect(code).toBe('VALIDATION_ERROR');
      expect(response.body.error.message).toBe(`The request body is not valid ${encoding} data`);
    }
  });

  it('a body that matches it is read', async () => {
    const response = await fetch(`${app.url}/api/projects`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ name: 'Compressed' })),
    });
    expect(response.status).toBe(201);
    expect(((await response.json()) as { data: { name: string } }).data.name).toBe('Compressed');
  });
});

describe('the media type of a body', () => {
  it('a type other than application/json is refused with 415 and changes nothing, however JSON-like its name', async () => {
    const project = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Typed body' } });
    const path = `/api/projects/${project.body.data.id}`;
    for (const type of ['application/json-patch+json', 'application/jsonx', 'application/merge-patch+json', 'text/plain']) {
      const response = await call(app.url, path, { method: 'PATCH', apiKey: key, rawBody: '{"name":"changed","status":"archived"}', headers: { 'content-type': type } });
      expect(response.status, `${type}: ${response.text}`).toBe(415);
      expect(response.body.error).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', message: `Content-Type "${type}" is not supported: send application/json` });
    }
    const unchanged = await call(app.url, path, { apiKey: key });
    expect(unchanged.body.data).toMatchObject({ name: 'Typed body', status: 'active', updatedAt: project.body.data.updatedAt });
  });

  it('a body without a Content-Type is refused the same way', async () => {
    const response = await fetch(`${app.url}/api/projects`, { method: 'POST', headers: { 'x-api-key': key }, body: new Uint8Array(Buffer.from('{"name":"Untyped"}')) });
    expect(response.status).toBe(415);
    expect(((await response.json()) as { error: unknown }).error).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'A body needs Content-Type: application/json' });
  });

  it('media types are matched without regard to case, on REST as on tRPC', async () => {
    for (const [path, type] of [
      ['/api/projects', 'Application/JSON'],
      ['/api/projects', 'APPLICATION/JSON; Charset=UTF-8'],
      ['/trpc/projects.create', 'Application/JSON'],
    ] as const) {
      const response = await call(app.url, path, { apiKey: key, body: { name: `Cased ${type}` }, headers: { 'content-type': type } });
      expect([200, 201], `${path} ${type}: ${response.text}`).toContain(response.status);
    }
  });
});

describe('a query parameter the operation does not declare', () => {
  it('is refused by name, as an unknown body field is, instead of being dropped (a misspelt filter would list everything)', async () => {
    const misspelt = await call(app.url, '/api/projects?stauts=archived&limit=5', { apiKey: key });
    expect(misspelt.status, misspelt.text).toBe(400);
    expect(misspelt.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'The query names parameters this operation does not take (it takes limit, offset, status)',
      details: { issues: [{ field: 'stauts', issue: 'is not a field that can be set here' }] },
    });
    const none = await call(app.url, '/api/me?verbose=1', { apiKey: key });
    expect([none.status, none.body.error?.message]).toEqual([400, 'The query names parameters this operation does not take (it takes none)']);
    const declared = await call(app.url, '/api/projects?status=archived&limit=5&offset=0', { apiKey: key });
    expect(declared.status, declared.text).toBe(200);
  });

  it('given empty, counts as not given, as an HTML form sends an unset field', async () => {
    await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Listed whatever the status' } });
    const all = await call(app.url, '/api/projects', { apiKey: key });
    const blank = await call(app.url, '/api/projects?status=&limit=&offset=', { apiKey: key });
    expect(blank.status, blank.text).toBe(200);
    expect([blank.body.data.total, blank.body.data.limit, blank.body.data.offset]).toEqual([all.body.data.total, 50, 0]);
  });

  it('on a create too, which then creates nothing; a path no operation has stays NOT_FOUND', async () => {
    const before = (await call(app.url, '/api/projects?limit=1', { apiKey: key })).body.data.total;
    const create = await call(app.url, '/api/projects?dryRun=true', { apiKey: key, body: { name: 'Not a dry run' } });
    expect([create.status, create.body.error?.details?.issues]).toEqual([400, [{ field: 'dryRun', issue: 'is not a field that can be set here' }]]);
    expect((await call(app.url, '/api/projects?limit=1', { apiKey: key })).body.data.total).toBe(before);
    expect((await call(app.url, '/api/no-such-thing?x=1', { apiKey: key })).status).toBe(404);
  });
});

describe('a body field named like a path parameter', () => {
  it('is refused by field, not silently replaced by the path value', async () => {
    const project = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Path owns the id' } });
    const other = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Other project' } });
    const path = `/api/projects/${project.body.data.id}`;
    for (const projectId of [other.body.data.id, 'not-a-uuid', project.body.data.id]) {
      const response = await call(app.url, path, { method: 'PATCH', apiKey: key, body: { projectId, name: 'renamed' } });
      expect(response.status, response.text).toBe(400);
      expect(response.body.error.details.issues).toEqual([{ field: 'projectId', issue: 'is not a field that can be set here' }]);
    }
    for (const id of [project.body.data.id, other.body.data.id]) {
      expect((await call(app.url, `/api/projects/${id}`, { apiKey: key })).body.data.name).not.toBe('renamed');
    }
    const orgId = app.bootstrap.organizationId;
    const organization = await call(app.url, `/api/organizations/${orgId}`, { method: 'PUT', apiKey: key, body: { id: orgId, displayName: 'Shadowed' } });
    expect(organization.status, organization.text).toBe(400);
    expect(organization.body.error.details.issues).toEqual([{ field: 'id', issue: 'is not a field that can be set here' }]);
  });

  it('in a query string too, whether the route reads its fields from the query or the body', async () => {
    const project = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Queried' } });
    const other = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Queried other' } });
    const read = await call(app.url, `/api/projects/${project.body.data.id}?projectId=${other.body.data.id}`, { apiKey: key });
    const patch = await call(app.url, `/api/projects/${project.body.data.id}?projectId=${other.body.data.id}`, { method: 'PATCH', apiKey: key, body: { description: 'which one?' } });
    for (const response of [read, patch]) {
      expect(response.status, response.text).toBe(400);
      expect(response.body.error.details?.issues, response.text).toEqual([{ field: 'projectId', issue: 'is not a field that can be set here' }]);
    }
    expect((await call(app.url, `/api/projects/${project.body.data.id}`, { apiKey: key })).body.data.description).toBeNull();
  });
});

describe('HEAD', () => {
  it('answers a GET route as GET would, without the body', async () => {
    for (const path of ['/api/projects', '/api/health', `/api/organizations/${app.bootstrap.organizationId}`]) {
      const get = await fetch(`${app.url}${path}`, { headers: { 'x-api-key': key } });
      const head = await fetch(`${app.url}${path}`, { method: 'HEAD', headers: { 'x-api-key': key } });
      expect(head.status, path).toBe(get.status);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(await head.text()).toBe('');
    }
    const unknown = await fetch(`${app.url}/api/projects/${crypto.randomUUID()}`, { method: 'HEAD', headers: { 'x-api-key': key } });
    expect(unknown.status).toBe(404);
    // A HEAD that matches no route is still a HEAD to the routes after, and to the log.
    expect((await fetch(`${app.url}/api/no-such-route-for-head`, { method: 'HEAD', headers: { 'x-api-key': key } })).status).toBe(404);
    const logged = app.logLines.filter((line) => (line.req as { url?: string } | undefined)?.url === '/api/no-such-route-for-head');
    expect(logged.map((line) => (line.req as { method: string }).method)).toEqual(['HEAD']);
  });
});

describe('ids in any letter case', () => {
  it('name the same rows: a uuid in capitals reaches what it names, and answers name it in lower case', async () => {
    const orgId = app.bootstrap.organizationId;
    const project = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Capitals', organizationId: orgId } })).body.data;
    // The route's organization compared with the project's: one id, whatever its case.
    const execute = await call(app.url, `/api/${orgId.toUpperCase()}/kits/openapi-api/execute`, { apiKey: key, body: sampleExecutionBody(project.id.toUpperCase()) });
    expect(execute.status, execute.text).toBe(201);
    const credential = await call(app.url, `/api/${orgId}/kits/credentials`, {
      apiKey: key,
      body: { projectId: project.id, kitId: 'git-publish', credentialType: 'git-token', credentials: { token: 'capital-secret', repository: 'https://git.example/acme' } },
    });
    expect(credential.status, credential.text).toBe(201);
    const deleted = await call(app.url, `/api/${orgId}/kits/credentials/${credential.body.data.credentialId.toUpperCase()}`, { method: 'DELETE', apiKey: key });
    expect(deleted.body.data).toEqual({ credentialId: credential.body.data.credentialId, deleted: true });
    const removedProject = await call(app.url, `/api/projects/${project.id.toUpperCase()}`, { method: 'DELETE', apiKey: key });
    expect(removedProject.body.data.projectId).toBe(project.id);
  });
});
