import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleKit } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
let orgId: string;
let projectId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

beforeAll(async () => {
  app = await startTestApp();
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  const kit = sampleKit({ id: 'deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }] });
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Deploys' } })).body.data.id;
});
afterAll(() => app?.stop());

const store = (credentials: unknown) =>
  call(app.url, `/api/${orgId}/kits/credentials`, { apiKey: key, body: { projectId, kitId: 'deployer', credentialType: 'deploy', credentials } });

describe('a credential stored with plain values', () => {
  it('is refused by field when it holds no value, storing nothing: as the newest of its type it would hide one that works', async () => {
    for (const credentials of [{}, { token: '' }, { token: null }, { nested: {}, list: [] }]) {
      const response = await store(credentials);
      expect([response.status, response.body.error?.code], JSON.stringify(credentials)).toEqual([400, 'VALIDATION_ERROR']);
      expect(response.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(['credentials']);
    }
    expect(await sqlAsOwner('select id from kit_credentials')).toEqual([]);
  });

  it('is refused by field, without its value, when it holds a whole number JSON cannot carry exactly (it would be stored rounded)', async () => {
    const before = await sqlAsOwner('select id from kit_credentials');
    const response = await call(app.url, `/api/${orgId}/kits/credentials`, {
      apiKey: key,
      rawBody: `{"projectId":"${projectId}","kitId":"deployer","credentialType":"deploy","credentials":{"auth":{"pin":12345678901234567890}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect([response.status, response.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(response.body.error.details.issues).toEqual([{ field: 'credentials.auth.pin', issue: 'is a whole number past 9007199254740991, which JSON does not carry exactly (it would be stored rounded): send it as a string' }]);
    expect(response.text).not.toMatch(/1234567890123456/);
    expect(await sqlAsOwner('select id from kit_credentials')).toEqual(before);
    // The largest exact one is stored as sent.
    expect((await store({ pin: 9007199254740991 })).status).toBe(201);
  });

  it('is stored when it holds a value at any depth', async () => {
    for (const credentials of [{ token: 'ghp_a-working-token' }, { auth: { port: 22 } }, { flags: [true] }]) {
      const response = await store(credentials);
      expect([response.status, response.body.data?.status], JSON.stringify(credentials)).toEqual([201, 'active']);
    }
  });
});
