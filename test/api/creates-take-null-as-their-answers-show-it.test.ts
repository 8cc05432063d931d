import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// Answers show an absent displayName (organizations) and description (projects) as null, and PUT
// and PATCH take null to clear them; a create given back what an answer showed takes it too.
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('creates given null where answers show null', () => {
  it('POST /api/organizations takes displayName: null as none', async () => {
    const response = await call(app.url, '/api/organizations', { apiKey: app.bootstrap.apiKey, body: { name: 'Nameless', slug: `nameless-${Date.now()}`, displayName: null } });
    expect(response.status, response.text).toBe(201);
    expect(response.body.data.displayName).toBeNull();
  });

  it('POST /api/projects takes description: null as none', async () => {
    const response = await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, body: { name: 'Undescribed', description: null } });
    expect(response.status, response.text).toBe(201);
    expect(response.body.data.description).toBeNull();
  });
});
