import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltInKits } from '../../control-plane/domains/kits/builtin-kits.ts';
import { call } from '../helpers/http.ts';
import { builtInKitsDirectory, sampleKit, storedKitCounts } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
let orgId: string;
let projectId: string;

beforeAll(async () => {
  app = await startTestApp();
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Registry ids' } })).body.data.id;
});
afterAll(() => app?.stop());

const publish = (body: unknown) => call(app.url, `/api/${orgId}/kits`, { apiKey: key, body });
const storeCredential = (kitId: string, credentialType: string) =>
  call(app.url, `/api/${orgId}/kits/credentials`, { apiKey: key, body: { projectId, kitId, credentialType, credentials: { token: 'tok-123' } } });

describe('a credential a kit declares', () => {
  it('is refused at publish when its id is longer than a credential can be stored under, naming it, and nothing is stored', async () => {
    const before = await storedKitCounts(app.database.ownerUrl);
    const longId = 'deploy-' + 'k'.repeat(94); // 101 characters
    const kit = sampleKit({ id: 'long-credential', credentials: [{ id: longId, description: 'Deploy token', required: true }] });
    const refused = await publish(kit);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.error.code).toBe('VALIDATION_ERROR');
    expect(refused.body.error.details.problems).toEqual([
      { file: 'kit.json', message: 'credentials[0].id: must be at most 100 characters, the longest id a credential can be stored under' },
    ]);
    expect(await storedKitCounts(app.database.ownerUrl)).toEqual(before);
  });

  it('is published, and its credential stored, at the longest id a credential can be stored under', async () => {
    const longestId = 'deploy-' + 'k'.repeat(93); // 100 characters
    const kit = sampleKit({ id: 'longest-credential', credentials: [{ id: longestId, description: 'Deploy token', required: true }] });
    expect((await publish(kit)).status).toBe(201);
    const stored = await storeCredential('longest-credential', longestId);
    expect(stored.status, stored.text).toBe(201);
  });
});

describe("an organization's kit whose id a later release gives a built-in kit", () => {
  it('still takes new versions, and stays the one the organization reads, runs and stores credentials for', async () => {
    const own = sampleKit({ id: 'house-kit', credentials: [{ id: 'deploy', description: 'Deploy token', required: false }] });
    own.manifest.metadata.displayName = 'Our own kit';
    expect((await publish(own)).status).toBe(201);
    // The next release ships a built-in kit of the same id; boot registers it.
    expect(await registerBuiltInKits(app.service.owner.db, app.service.log, await builtInKitsDirectory('house-kit'))).toEqual(['house-kit@5.0.0']);

    const next = sampleKit({ id: 'house-kit', version: '1.1.0', credentials: [{ id: 'deploy', description: 'Deploy token', required: false }] });
    next.manifest.metadata.displayName = 'Our own kit';
    const published = await publish(next);
    expect([published.status, published.body.data ?? published.body.error]).toEqual([201, expect.objectContaining({ kitId: 'house-kit', version: '1.1.0', displayName: 'Our own kit' })]);

    const detail = await call(app.url, `/api/${orgId}/kits/house-kit`, { apiKey: key });
    expect(detail.body.data).toMatchObject({ builtIn: false, version: '1.1.0', displayName: 'Our own kit' });
    expect(detail.body.data.versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0', '1.1.0']);
    expect((await storeCredential('house-kit', 'deploy')).status).toBe(201);
  });

  it('is still refused for a kit the organization does not have yet', async () => {
    const before = await storedKitCounts(app.database.ownerUrl);
    await registerBuiltInKits(app.service.owner.db, app.service.log, await builtInKitsDirectory('shipped-kit'));
    const refused = await publish(sampleKit({ id: 'shipped-kit' }));
    expect([refused.status, refused.body.error?.message]).toEqual([409, 'The kit id shipped-kit belongs to a built-in kit; choose another id']);
    expect(await storedKitCounts(app.database.ownerUrl)).toEqual([before[0]! + 1, before[1]! + 1]);
  });
});
