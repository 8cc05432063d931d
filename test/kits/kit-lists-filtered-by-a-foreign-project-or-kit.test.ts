import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit } from '../helpers/kit-fixtures.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * README, Kits: "A `projectId` must name a project of that organization: any other (another
 * organization's, even one the caller also belongs to) is NOT_FOUND". The lists' `?projectId=`
 * filter too: a caller who names the wrong project hears so, instead of reading "no executions".
 * And their `?kitId=` filter alike: a kit the organization cannot run — a misspelt id, another
 * organization's kit — is NOT_FOUND on field kitId. Before, that answered 200 with an empty page,
 * which reads as "this kit has no executions" or "no credential is stored for it" — the very answer
 * a caller checks before storing another one or starting a run.
 */
let app: TestApp;
let key: string;
let orgId: string;
let ownProject: string;
let otherOrgProject: string;
let otherTenantProject: string;
let executionId: string;
let credentialId: string;

beforeAll(async () => {
  app = await startTestApp({ mode: 'all' });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  const kit = sampleKit({ credentials: [{ id: 'token', description: 'A token', required: false }] });
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
  ownProject = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Ours', organizationId: orgId } })).body.data.id;
  // A second organization of the same caller, with a project of its own.
  const otherOrg = await call(app.url, '/api/organizations', { apiKey: key, body: { name: 'Sister', slug: 'sister-org' } });
  expect(otherOrg.status, otherOrg.text).toBe(201);
  otherOrgProject = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Theirs', organizationId: otherOrg.body.data.id } })).body.data.id;
  // And a kit only it holds.
  expect((await call(app.url, `/api/${otherOrg.body.data.id}/kits`, { apiKey: key, body: sampleKit({ id: 'sister-only' }) })).status).toBe(201);
  const foreign = await createTenant(app, 'Foreign');
  otherTenantProject = (await call(app.url, '/api/projects', { apiKey: foreign.apiKey, body: { name: 'Foreign' } })).body.data.id;

  const started = await call(app.url, `/api/${orgId}/kits/service-starter/execute`, { apiKey: key, body: sampleExecutionBody(ownProject) });
  expect(started.status, started.text).toBe(201);
  executionId = started.body.data.executionId;
  const stored = await call(app.url, `/api/${orgId}/kits/credentials`, {
    apiKey: key,
    body: { projectId: ownProject, kitId: 'service-starter', credentialType: 'token', credentials: { token: 'not-shown' } },
  });
  expect(stored.status, stored.text).toBe(201);
  credentialId = stored.body.data.credentialId;
});
afterAll(() => app?.stop());

const lists = [
  { name: 'executions', path: 'kits/executions', items: 'executions', id: () => executionId },
  { name: 'credentials', path: 'kits/credentials', items: 'credentials', id: () => credentialId },
] as const;

describe.each(lists)('the $name list filtered by ?projectId=', ({ path, items, id }) => {
  it("lists the organization's own project's rows", async () => {
    const listed = await call(app.url, `/api/${orgId}/${path}?projectId=${ownProject}`, { apiKey: key });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data[items].map((row: { id: string }) => row.id)).toEqual([id()]);
    expect(listed.body.data.total).toBe(1);
  });

  it("answers NOT_FOUND on field projectId for another organization's project, even one the caller belongs to", async () => {
    const listed = await call(app.url, `/api/${orgId}/${path}?projectId=${otherOrgProject}`, { apiKey: key });
    expect([listed.status, listed.body.success, listed.body.error?.code, listed.body.error?.details]).toEqual([404, false, 'NOT_FOUND', { field: 'projectId' }]);
  });

  it("answers the same NOT_FOUND for another tenant's project and for no project at all, telling nothing apart", async () => {
    const foreign = await call(app.url, `/api/${orgId}/${path}?projectId=${otherTenantProject}`, { apiKey: key });
    const unknown = await call(app.url, `/api/${orgId}/${path}?projectId=00000000-0000-4000-8000-000000000000`, { apiKey: key });
    for (const answer of [foreign, unknown]) expect([answer.status, answer.body.error?.code, answer.body.error?.details]).toEqual([404, 'NOT_FOUND', { field: 'projectId' }]);
    expect(foreign.body.error.message).toBe(unknown.body.error.message);
  });
});

describe.each(lists)('the $name list filtered by ?kitId=', ({ path, items, id }) => {
  it('lists the rows of a kit the organization runs, and an empty page for a built-in kit it has not run', async () => {
    const own = await call(app.url, `/api/${orgId}/${path}?kitId=service-starter`, { apiKey: key });
    expect(own.status, own.text).toBe(200);
    expect(own.body.data[items].map((row: { id: string }) => row.id)).toEqual([id()]);
    const builtIn = await call(app.url, `/api/${orgId}/${path}?kitId=project-docs`, { apiKey: key });
    expect([builtIn.status, builtIn.body.data?.total]).toEqual([200, 0]);
  });

  it('answers NOT_FOUND on field kitId for a misspelt kit, not an empty page', async () => {
    const listed = await call(app.url, `/api/${orgId}/${path}?kitId=service-startr`, { apiKey: key });
    expect([listed.status, listed.body.success, listed.body.error?.code, listed.body.error?.details]).toEqual([404, false, 'NOT_FOUND', { field: 'kitId' }]);
  });

  it("answers the same NOT_FOUND for another organization's kit, even one the caller can run there", async () => {
    const foreign = await call(app.url, `/api/${orgId}/${path}?kitId=sister-only`, { apiKey: key });
    const unknown = await call(app.url, `/api/${orgId}/${path}?kitId=no-such-kit`, { apiKey: key });
    for (const answer of [foreign, unknown]) expect([answer.status, answer.body.error?.code, answer.body.error?.details]).toEqual([404, 'NOT_FOUND', { field: 'kitId' }]);
    expect(foreign.body.error.message).toBe(unknown.body.error.message);
  });
});
