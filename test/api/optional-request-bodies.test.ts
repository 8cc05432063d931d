import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedOperations } from '../helpers/documented-operations.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * README: a POST, PUT or PATCH with no body at all means "no fields". Where every field is optional
 * (a PATCH, a PUT that changes what it is sent, a key rotation) such a call succeeds, so the
 * document must not call the body required; where a field is required, the call is refused naming
 * it, and the document says the body is required.
 */
let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
});
afterAll(() => app?.stop());

type Operation = { requestBody?: { required?: boolean; content: Record<string, { schema: { properties?: Record<string, unknown> } }> } };

describe('an operation called without a body', () => {
  it('is refused for a missing field exactly where the document says its body is required', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const mismatches: string[] = [];
    let checked = 0;
    for (const { method, template, path, operation } of documentedOperations<Operation>(document)) {
      if (!operation.requestBody) continue;
      const fields = Object.keys(operation.requestBody.content['application/json']?.schema.properties ?? {});
      const response = await call(app.url, path, { method, apiKey: key });
      checked += 1;
      const named: string[] = (response.body?.error?.details?.issues ?? []).map((issue: { field: string }) => issue.field);
      const refusedForAField = response.status === 400 && named.some((field) => fields.includes(field));
      if (refusedForAField !== (operation.requestBody.required === true)) {
        mismatches.push(`${method} ${template}: documented required ${operation.requestBody.required}, answered ${response.status} ${response.text.slice(0, 160)}`);
      }
    }
    expect(checked).toBeGreaterThan(15);
    expect(mismatches).toEqual([]);
  });

  it('changes nothing and succeeds where every field is optional, as the document says', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    expect(document.paths['/projects/{projectId}'].patch.requestBody.required).toBe(false);
    expect(document.paths['/projects'].post.requestBody.required).toBe(true);
    const project = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Bodiless patch' } });
    const patched = await call(app.url, `/api/projects/${project.body.data.id}`, { method: 'PATCH', apiKey: key });
    expect([patched.status, patched.body.data?.name]).toEqual([200, 'Bodiless patch']);
  });
});
