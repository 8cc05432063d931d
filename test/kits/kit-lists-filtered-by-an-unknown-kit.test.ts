import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The lists' `?kitId=` filter, as their `?projectId=` one: a kit the organization cannot run — a
 * misspelt id, another organization's kit — is NOT_FOUND on field kitId. Before, a typo answered
 * 200 with an empty page, which reads as "this kit has no executions" or "no credential is stored
 * for it" — the very answer a caller checks before storing another one or starting a run.
 */
let app: TestApp;
let key: string;
let orgId: string;
let otherOrgId: string;
let executionId: string;
let credentialId: string;

beforeAll(async () => {
  app = await startTestApp({ mode: 'api' });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  const kit = sampleKit({ id: 'deployer', credentials: [{ id: 'token', description: 'A token', required: false }] });
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
  const projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Ours', organizationId: orgId } })).body.data.id;
  // A second organization of the same caller, with a kit only it holds.
  const otherOrg = await call(app.url, '/api/organizations', { apiKey: key, body: { name: 'Sister', slug: 'sister-of-kit-filters' } });
  expect(otherOrg.status, otherOrg.text).toBe(201);
  otherOrgId = otherOrg.body.data.id;
  expect((await call(app.url, `/api/${otherOrgId}/kits`, { apiKey: key, body: sampleKit({ id: 'sister-only' }) })).status).toBe(201);

  const started = await call(app.url, `/api/${orgId}/kits/deployer/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
  expect(started.status, started.text).toBe(201);
  executionId = started.body.data.executionId;
  const stored = await call(app.url, `/api/${orgId}/kits/credentials`, { apiKey: key, body: { projectId, kitId: 'deployer', credentialType: 'token', credentials: { token: 'not-shown' } } });
  expect(stored.status, stored.text).toBe(201);
  credentialId = stored.body.data.credentialId;
});
afterAll(() => app?.stop());

const lists = [
  { name: 'executions', path: 'kits/executions', items: 'executions', id: () => executionId },
  { name: 'credentials', path: 'kits/credentials', items: 'credentials', id: () => credentialId },
] as const;

describe.each(lists)('the $name list filtered by ?kitId=', ({ path, items, id }) => {
  it("lists the rows of a kit the organization runs, and answers an empty page for a built-in kit it has not run", async () => {
    const own = await call(app.url, `/api/${orgId}/${path}?kitId=deployer`, { apiKey: key });
    expect(own.status, own.text).toBe(200);
    expect(own.body.data[items].map((row: { id: string }) => row.id)).toEqual([id()]);
    const builtIn = await call(app.url, `/api/${orgId}/${path}?kitId=project-docs`, { apiKey: key });
    expect([builtIn.status, builtIn.body.data?.total]).toEqual([200, 0]);
  });

  it('answers NOT_FOUND on field kitId for a misspelt kit, not an empty page', async () => {
    const listed = await call(app.url, `/api/${orgId}/${path}?kitId=deployr`, { apiKey: key });
    expect([listed.status, listed.body.success, listed.body.error?.code, listed.body.error?.details]).toEqual([404, false, 'NOT_FOUND', { field: 'kitId' }]);
  });

  it("answers the same NOT_FOUND for another organization's kit, even one the caller can run there", async () => {
    const foreign = await call(app.url, `/api/${orgId}/${path}?kitId=sister-only`, { apiKey: key });
    const unknown = await call(app.url, `/api/${orgId}/${path}?kitId=no-such-kit`, { apiKey: key });
    for (const answer of [foreign, unknown]) expect([answer.status, answer.body.error?.code, answer.body.error?.details]).toEqual([404, 'NOT_FOUND', { field: 'kitId' }]);
    expect(foreign.body.error.message).toBe(unknown.body.error.message);
  });
});
