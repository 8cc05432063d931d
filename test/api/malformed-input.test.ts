import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Every route of the OpenAPI document, fed malformed input: wrong path parameters, bodies of the
 * wrong type, operator-looking objects, absurd query values. A caller's mistake must never be a
 * 500, and every refusal must be in the envelope with a catalog code.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
});
afterAll(() => app?.stop());

const badPathValues = ['not-a-uuid', '%00', '..%2F..%2Fetc', 'x'.repeat(300)];
// Raw JSON, so that keys like __proto__ reach the server as sent.
const badBodies = ['[]', '"a string"', '42', 'null', '{"$gt": 1}', '{"name": {"$ne": null}, "projectId": ["a"], "limit": -1}', '{"__proto__": {"isPlatformAdmin": true}, "constructor": {"prototype": {}}}'];
const badQueries = ['?limit=-1&offset=abc', '?limit=99999', '?status=%00&type=<script>', '?projectId=1&projectId=2'];

describe('malformed input on every route', () => {
  it('never answers 5xx and always answers in the envelope', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const failures: string[] = [];
    let calls = 0;
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        const paths = path.includes('{') ? badPathValues.map((value) => path.replace(/\{\w+\}/g, value)) : [path];
        for (const filled of paths) {
          const attempts = method === 'GET' || method === 'DELETE' ? badQueries.map((query) => ({ query, body: undefined })) : badBodies.map((body) => ({ query: '', body }));
          for (const { query, body } of attempts) {
            const response = await call(app.url, `/api${filled}${query}`, {
              method,
              apiKey: app.bootstrap.apiKey,
              ...(body !== undefined ? { rawBody: body, headers: { 'content-type': 'application/json' } } : {}),
            });
            calls += 1;
            const label = `${method} ${filled.slice(0, 60)}${query} ${body === undefined ? '' : body.slice(0, 40)} → ${response.status}`;
            if (response.status >= 500) failures.push(label);
            else if (response.status >= 400 && !(response.body?.success === false && typeof response.body.error?.code === 'string')) failures.push(`${label} (not an envelope)`);
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(200);
    expect(failures).toEqual([]);
  }, 120_000);
});
