import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNKNOWN_UUID } from '../helpers/documented-operations.ts';
import { call, type ApiResponse } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { tableSnapshot } from '../helpers/table-snapshot.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';
import { sampleKit } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The suite-wide rules Variant B's document is held to (isolation-matrix, malformed-input,
 * methods-a-path-does-not-take, authentication-challenge), applied to Variant A's own document,
 * /api/basic/openapi.json: every route, in A's bare error shape `{code, message, details?}`.
 */

let app: TestApp;
let key: string;
let document: any;
let projectId: string;
let storyId: string;
let kitId: string;
let foreigner: Actor & { tenantId: string };
let nonMember: Actor;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
  document = (await call(app.url, '/api/basic/openapi.json')).body;
  const project = await call(app.url, '/api/basic/projects', { apiKey: key, body: { name: 'Victim', description: 'kept' } });
  expect(project.status, project.text).toBe(201);
  projectId = project.body.id;
  const story = await call(app.url, '/api/basic/userstories', { apiKey: key, body: { projectId, title: 'Victim story' } });
  expect(story.status, story.text).toBe(201);
  storyId = story.body.id;
  const kit = sampleKit({ id: 'victim-kit' });
  const published = await call(app.url, `/api/${app.bootstrap.organizationId}/kits`, { apiKey: key, body: kit });
  expect(published.status, published.text).toBe(201);
  kitId = published.body.data.id;
  foreigner = await createTenant(app, 'Foreign');
  // With kits on in their tenant too, a kit route answers them as it would a kit of their own: NOT_FOUND, not the flag.
  await call(app.url, `/api/admin/tenants/${foreigner.tenantId}/features`, { method: 'PATCH', apiKey: key, body: { kits_enabled: true } });
  nonMember = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Nadia');
});
afterAll(() => app?.stop());

type Operation = { requestBody?: { content: Record<string, { schema: any }> }; responses: Record<string, unknown> };
const operations = () =>
  Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([template, byMethod]) =>
    Object.entries(byMethod).map(([method, operation]) => ({ method: method.toUpperCase(), template, operation })),
  );

/** A's bare error: `{code, message}` and perhaps `details`, nothing else (no envelope). */
function isBareError(response: ApiResponse): boolean {
  const body = response.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const keys = Object.keys(body).filter((name) => name !== 'details');
  return keys.sort().join() === 'code,message' && typeof body.code === 'string' && typeof body.message === 'string';
}

describe('isolation on every A route that takes an id', () => {
  const filled = (template: string) => template.replace('/projects/{id}', `/projects/${projectId}`).replace('/userstories/{id}', `/userstories/${storyId}`).replace('/kits/{id}', `/kits/${kitId}`);
  const bodyFor = (method: string, template: string) => {
    if (!['PUT', 'PATCH'].includes(method)) return undefined;
    if (template.startsWith('/projects')) return { name: 'Taken over' };
    return template.startsWith('/kits') ? { status: 'deprecated' } : { projectId, title: 'Taken over' };
  };

  it('answers another tenant and a non-member NOT_FOUND in the bare shape, and changes nothing', async () => {
    const before = await tableSnapshot(app.database.ownerUrl);
    // The collections this file has a victim row of (another collection added to A brings its own).
    const routes = operations().filter(({ template }) => ['/projects/{id}', '/userstories/{id}', '/kits/{id}'].includes(template));
    expect(routes.length).toBeGreaterThanOrEqual(10);
    const outcomes: string[] = [];
    for (const caller of [foreigner, nonMember]) {
      for (const { method, template } of routes) {
        const body = bodyFor(method, template);
        const response = await call(app.url, `/api/basic${filled(template)}`, { method, apiKey: caller.apiKey, ...(body ? { body } : {}) });
        const got = `${response.status} ${response.body?.code}${isBareError(response) ? '' : ' (not bare)'}`;
        if (got !== '404 NOT_FOUND') outcomes.push(`${caller === foreigner ? 'foreigner' : 'non-member'} ${method} ${template} → ${got}`);
      }
      // A list shows none of it, and a create naming the victim's project is NOT_FOUND.
      const projects = await call(app.url, '/api/basic/projects', { apiKey: caller.apiKey });
      if (projects.body.items.some((item: { id: string }) => item.id === projectId)) outcomes.push('the victim project is listed');
      const stories = await call(app.url, `/api/basic/userstories?projectId=${projectId}`, { apiKey: caller.apiKey });
      if (stories.status === 200 && stories.body.items.length > 0) outcomes.push('the victim story is listed');
      const kits = await call(app.url, '/api/basic/kits', { apiKey: caller.apiKey });
      if (kits.status !== 200 || kits.body.items.some((item: { id: string }) => item.id === kitId)) outcomes.push(`kits list → ${kits.status} ${kits.text.slice(0, 100)}`);
      const planted = await call(app.url, '/api/basic/userstories', { apiKey: caller.apiKey, body: { projectId, title: 'Planted' } });
      if (planted.status !== 404 || !isBareError(planted)) outcomes.push(`planted story → ${planted.status} ${planted.text.slice(0, 100)}`);
    }
    expect(outcomes).toEqual([]);
    expect(await tableSnapshot(app.database.ownerUrl)).toEqual(before);
  });
});

describe('malformed input on every A route', () => {
  const badPathValues = ['not-a-uuid', '%00', '..%2F..%2Fetc', 'x'.repeat(300), '%E0%A4%A'];
  const badBodies = ['[]', '"a string"', '42', 'null', '{"$gt": 1}', '{"name": {"$ne": null}, "projectId": ["a"], "id": ["a"]}', '{"__proto__": {"isPlatformAdmin": true}}', '{"id": 5}', '{bad json'];
  const badQueries = ['?page=-1&pageSize=abc', '?pageSize=99999', '?sort=%00&order=<script>', '?page=1&page=2', '?projectId=1&projectId=2', '?page=1e3', '?x=%ZZ'];

  it('never answers 5xx, always refuses in the bare shape, and writes nothing', async () => {
    const before = await tableSnapshot(app.database.ownerUrl);
    const failures: string[] = [];
    let calls = 0;
    for (const { method, template } of operations()) {
      const paths = template.includes('{') ? badPathValues.map((value) => template.replace(/\{\w+\}/g, value)) : [template];
      for (const path of paths) {
        const attempts = ['GET', 'DELETE'].includes(method) ? badQueries.map((query) => ({ query, body: undefined })) : badBodies.map((body) => ({ query: '', body }));
        for (const { query, body } of attempts) {
          const response = await call(app.url, `/api/basic${path}${query}`, { method, apiKey: key, ...(body !== undefined ? { rawBody: body, headers: { 'content-type': 'application/json' } } : {}) });
          calls += 1;
          const label = `${method} ${path.slice(0, 60)}${query} ${body ?? ''} → ${response.status} ${response.text.slice(0, 120)}`;
          if (response.status >= 500) failures.push(label);
          else if (response.status >= 400 && !isBareError(response)) failures.push(`${label} (not bare)`);
          else if (response.status < 400 && method !== 'GET') failures.push(`${label} (taken)`);
        }
      }
    }
    expect(calls).toBeGreaterThan(100);
    expect(failures).toEqual([]);
    expect(await tableSnapshot(app.database.ownerUrl)).toEqual(before);
  }, 120_000);

  it('refuses bodies too large, of another type, or unreadable, before and after authentication, in the bare shape', async () => {
    const answers: Array<[string, ApiResponse]> = [];
    for (const apiKey of [key, undefined]) {
      answers.push(['too large', await call(app.url, '/api/basic/projects', { apiKey, rawBody: JSON.stringify({ name: 'x'.repeat(1_100_000) }), headers: { 'content-type': 'application/json' } })]);
      answers.push(['text', await call(app.url, '/api/basic/projects', { apiKey, rawBody: 'name=x', headers: { 'content-type': 'text/plain' } })]);
      answers.push(['bad gzip', await call(app.url, '/api/basic/projects', { apiKey, rawBody: 'xx', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } })]);
      answers.push(['bad encoding', await call(app.url, '/api/basic/projects/%E0%A4%A', { apiKey })]);
    }
    expect(answers.filter(([, response]) => response.status < 400 || response.status >= 500 || !isBareError(response)).map(([label, response]) => `${label} ${response.status} ${response.text.slice(0, 100)}`)).toEqual([]);
  });
});

describe('methods an A path does not take', () => {
  it('answer 405 with Allow in the bare shape, for every path of the document (HEAD wherever GET is)', async () => {
    const outcomes: unknown[] = [];
    const expected: unknown[] = [];
    for (const [template, byMethod] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      const listed = new Set(Object.keys(byMethod).map((method) => method.toUpperCase()));
      const allow = [...new Set([...listed, ...(listed.has('GET') ? ['HEAD'] : [])])].sort().join(', ');
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !listed.has(m))) {
        const response = await call(app.url, `/api/basic${template.replace(/\{\w+\}/g, UNKNOWN_UUID)}`, { method, apiKey: key, body: {} });
        outcomes.push([method, template, response.status, response.headers.get('allow'), response.body?.code, isBareError(response), response.headers.get('cache-control'), Boolean(response.headers.get('x-ratelimit-limit'))]);
        expected.push([method, template, 405, allow, 'METHOD_NOT_ALLOWED', true, 'no-store', true]);
      }
    }
    expect(outcomes.length).toBeGreaterThanOrEqual(4);
    expect(outcomes).toEqual(expected);
    const head = await call(app.url, `/api/basic/projects/${UNKNOWN_UUID}`, { method: 'HEAD', apiKey: key });
    expect([head.status, head.text]).toEqual([404, '']);
  });
});

describe('the challenge of a 401', () => {
  it('is sent by every A operation without credentials, and documented on each', async () => {
    const missing: string[] = [];
    for (const { method, template, operation } of operations()) {
      const response = await call(app.url, `/api/basic${template.replace(/\{\w+\}/g, UNKNOWN_UUID)}`, { method, ...(['POST', 'PUT', 'PATCH'].includes(method) ? { body: {} } : {}) });
      if (response.status !== 401 || !response.headers.get('www-authenticate') || !isBareError(response)) missing.push(`${method} ${template} → ${response.status} ${response.headers.get('www-authenticate')}`);
      const documented = (operation.responses['401'] as { headers?: Record<string, { required?: boolean }> } | undefined)?.headers?.['WWW-Authenticate'];
      if (documented?.required !== true) missing.push(`${method} ${template}: 401 challenge not documented`);
    }
    expect(missing).toEqual([]);
  });
});

describe('request bodies the document describes', () => {
  it('take an answer sent back as it came, id included, on every PUT and PATCH of a resource', async () => {
    // A user story's read-only timestamps are refused in its input (owned with the user stories): its answer goes back without them.
    const { createdAt: _created, updatedAt: _updated, ...story } = (await call(app.url, `/api/basic/userstories/${storyId}`, { apiKey: key })).body;
    const answers: Record<string, unknown> = {
      '/projects/{id}': (await call(app.url, `/api/basic/projects/${projectId}`, { apiKey: key })).body,
      '/userstories/{id}': story,
    };
    const refused: string[] = [];
    for (const { method, template, operation } of operations().filter(({ method, template }) => (method === 'PUT' || method === 'PATCH') && template in answers)) {
      const answer = answers[template];
      const schema = operation.requestBody?.content['application/json']?.schema;
      const validate = ajv.compile({ ...schema, components: document.components });
      if (!validate(answer)) refused.push(`${method} ${template}: the document refuses the answer: ${ajv.errorsText(validate.errors)}`);
      const sent = await call(app.url, `/api/basic${template.replace('{id}', (answer as { id: string }).id)}`, { method, apiKey: key, body: answer });
      if (sent.status !== 200) refused.push(`${method} ${template}: the server refuses the answer: ${sent.status} ${sent.text.slice(0, 200)}`);
    }
    expect(refused).toEqual([]);
  });
});

describe('an id in the body of a PUT or PATCH', () => {
  it('is judged only on a path the document serves as /collection/{id}: any other path is NOT_FOUND, an undecodable one a bad path', async () => {
    const outcomes: string[] = [];
    for (const method of ['PUT', 'PATCH']) {
      for (const path of [`/no-such-collection/${projectId}`, `/projects/${projectId}/extra`, `/nothing/${projectId}`, `/projects/${projectId}/userstories/${projectId}`]) {
        const response = await call(app.url, `/api/basic${path}`, { method, apiKey: key, body: { id: UNKNOWN_UUID, name: 'x' } });
        if (response.status !== 404 || response.body?.code !== 'NOT_FOUND' || !isBareError(response)) outcomes.push(`${method} ${path} → ${response.status} ${response.text.slice(0, 120)}`);
      }
      const undecodable = await call(app.url, '/api/basic/projects/%E0%A4%A', { method, apiKey: key, body: { id: UNKNOWN_UUID, name: 'x' } });
      if (undecodable.status !== 400 || undecodable.body?.message !== 'The request path is not valid URL encoding') outcomes.push(`${method} undecodable → ${undecodable.status} ${undecodable.text.slice(0, 120)}`);
    }
    expect(outcomes).toEqual([]);
    // The path's own id, in any letter case or percent-encoded, is still taken; another is still refused.
    const upper = await call(app.url, `/api/basic/projects/${projectId.replaceAll('-', '%2D')}`, { method: 'PATCH', apiKey: key, body: { id: projectId.toUpperCase() } });
    expect([upper.status, upper.body.id]).toEqual([200, projectId]);
    const other = await call(app.url, `/api/basic/projects/${projectId}`, { method: 'PUT', apiKey: key, body: { id: UNKNOWN_UUID, name: 'Hijack' } });
    expect([other.status, other.body.details]).toEqual([400, { issues: [{ field: 'id', issue: 'must be the id in the path' }] }]);
  });
});
