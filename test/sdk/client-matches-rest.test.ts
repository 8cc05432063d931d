import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpecwrightClient, errorCodeOf, type SpecwrightClient } from '../../sdk/index.ts';
import { call } from '../helpers/http.ts';
import { sampleKit } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** The typed client and the REST projection are one router: the same call gives the same data. */

let app: TestApp;
let client: SpecwrightClient;
let orgId: string;
const rest = async (path: string) => {
  const response = await call(app.url, `/api${path}`, { apiKey: app.bootstrap.apiKey });
  expect(response.status, response.text).toBe(200);
  return response.body.data;
};

beforeAll(async () => {
  app = await startTestApp();
  client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

describe('the typed client against the REST projection', () => {
  it('creates, reads, pages and filters with the data REST returns', async () => {
    const project = await client.projects.create.mutate({ name: 'Through the SDK', organizationId: orgId, metadata: { source: 'sdk' } });
    expect(project.phase).toBe('CREATED');
    expect(await client.projects.get.query({ projectId: project.id })).toEqual(await rest(`/projects/${project.id}`));
    const page = await client.projects.list.query({ limit: 1, offset: 0, status: 'active' });
    expect(page).toEqual(await rest('/projects?limit=1&offset=0&status=active'));
    expect(page.limit).toBe(1);
    // Paging defaults apply when the client leaves them out.
    const defaults = await client.organizations.list.query({});
    expect([defaults.limit, defaults.offset]).toEqual([50, 0]);
    expect(await client.organizations.slugCheck.query({ slug: 'free-slug-for-sdk' })).toEqual({ slug: 'free-slug-for-sdk', available: true });
    expect(await client.organizations.members.list.query({ id: orgId })).toEqual(await rest(`/organizations/${orgId}/members`));
  });

  it('publishes and reads kits, and reports catalog codes for failures', async () => {
    const published = await client.kits.publish.mutate({ orgId, ...sampleKit({ id: 'sdk-kit' }) });
    expect(published).toMatchObject({ kitId: 'sdk-kit' });
    expect(await client.kits.get.query({ orgId, kitId: 'sdk-kit' })).toEqual(await rest(`/${orgId}/kits/sdk-kit`));
    const kits = await client.kits.list.query({ orgId, limit: 200 });
    expect(kits).toEqual(await rest(`/${orgId}/kits?limit=200`));
    expect(await client.kitCredentials.publicKey.query({ orgId })).toEqual(await rest(`/${orgId}/kits/credentials/public-key`));
    const again = await client.kits.publish.mutate({ orgId, ...sampleKit({ id: 'sdk-kit' }) }).catch((error) => error);
    expect(errorCodeOf(again)).toBe('CONFLICT');
    const missing = await client.kitExecutions.get.query({ orgId, executionId: '00000000-0000-4000-8000-000000000000' }).catch((error) => error);
    expect(errorCodeOf(missing)).toBe('NOT_FOUND');
  });
});
