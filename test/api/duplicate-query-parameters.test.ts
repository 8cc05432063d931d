import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedOperations } from '../helpers/documented-operations.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Every query parameter of the document takes one value. Given twice, it is refused by name with
 * that reason, not with a misleading one ("must be a whole number" for `?limit=1&limit=2`, "a slug
 * has at least 3 characters" for two good slugs) and never with one value quietly chosen.
 */
let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
});
afterAll(() => app?.stop());

const givenTwice = (name: string) => [400, 'VALIDATION_ERROR', [{ field: name, issue: 'is given more than once' }]];
const outcomeOf = (response: { status: number; body: any }) => [response.status, response.body?.error?.code, response.body?.error?.details?.issues];

describe('a query parameter given more than once', () => {
  it.each([
    ['/api/projects?limit=1&limit=2', 'limit'],
    ['/api/projects?status=active&status=archived', 'status'],
    ['/api/organizations/slug-check?slug=abc&slug=def', 'slug'],
    ['/api/developer/api-keys?offset=0&offset=0', 'offset'],
  ])('%s is refused by name, saying so', async (path, name) => {
    const response = await call(app.url, path, { apiKey: key });
    expect(outcomeOf(response)).toEqual(givenTwice(name));
    expect(response.body.error.message).toBe('The query gives a parameter more than once; each takes one value');
  });

  it('is refused on every query parameter of every operation, whatever its type', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const problems: string[] = [];
    let checked = 0;
    for (const { method, template, path, operation } of documentedOperations<{ parameters?: Array<{ in: string; name: string }> }>(document)) {
      for (const { name } of (operation.parameters ?? []).filter((parameter) => parameter.in === 'query')) {
        const response = await call(app.url, `${path}?${name}=1&${name}=1`, { method, apiKey: key });
        checked += 1;
        if (JSON.stringify(outcomeOf(response)) !== JSON.stringify(givenTwice(name))) problems.push(`${method} ${template} ?${name}: ${response.text}`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(problems).toEqual([]);
  });

  it('given once, each still reads as before', async () => {
    const { organizationId } = app.bootstrap;
    for (const path of ['/api/projects?limit=1&status=active', '/api/organizations/slug-check?slug=abc', `/api/customer-invitations?organizationId=${organizationId}&limit=2`]) {
      const response = await call(app.url, path, { apiKey: key });
      expect([path, response.status]).toEqual([path, 200]);
    }
  });
});
