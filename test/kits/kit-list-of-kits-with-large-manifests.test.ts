import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDatabaseRelay, type DatabaseRelay } from '../helpers/database-relay.ts';
import { call } from '../helpers/http.ts';
import { sampleKit } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTestDatabase } from '../helpers/test-database.ts';

/** Random text, as large a manifest as a publish takes several of, well within the upload limit. */
const PADDING_CHARACTERS = 3 * 1024 * 1024;
const KITS = 3;

let app: TestApp;
let relay: DatabaseRelay;
let key: string;
let orgId: string;

beforeAll(async () => {
  const database = await createTestDatabase();
  // The requests' connections (the app role's) pass through the relay; the test's own do not.
  relay = await startDatabaseRelay(new URL(database.appUrl));
  app = await startTestApp({ database, env: { APP_DATABASE_URL: relay.urlFor(database.appUrl) } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  for (let index = 0; index < KITS; index++) {
    // A credential's description has no bound of its own: the manifest is as large as the upload allows.
    const description = randomBytes(PADDING_CHARACTERS).toString('base64').slice(0, PADDING_CHARACTERS);
    const kit = sampleKit({ id: `large-manifest-${index}`, credentials: [{ id: 'token', description, required: false }] });
    const published = await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit });
    expect(published.status, published.text.slice(0, 300)).toBe(201);
  }
}, 120_000);
afterAll(async () => {
  await app?.stop();
  relay?.close();
});

describe('the kit list of an organization whose kits have large manifests', () => {
  it("reads each kit's summary from the database, not its whole manifest", async () => {
    const before = relay.bytesFromDatabase;
    const listed = await call(app.url, `/api/${orgId}/kits?limit=200`, { apiKey: key });
    const read = relay.bytesFromDatabase - before;
    expect(listed.status).toBe(200);
    const large = listed.body.data.kits.filter((kit: { kitId: string }) => kit.kitId.startsWith('large-manifest-'));
    expect(large).toHaveLength(KITS);
    for (const kit of large) expect(kit).toMatchObject({ outputCount: 3, supportedPhases: ['SPEC', 'CHECK', 'DISCOVER', 'PLAN', 'VALIDATE', 'APPLY', 'VERIFY'], builtIn: false });
    // The manifests hold 9 MiB between them; the list's rows are a few hundred bytes each.
    expect(read).toBeLessThan(256 * 1024);
  });

  it('still answers the whole latest manifest for one kit', async () => {
    const detail = await call(app.url, `/api/${orgId}/kits/large-manifest-0`, { apiKey: key });
    expect(detail.status).toBe(200);
    expect(detail.body.data.manifest.credentials[0].description).toHaveLength(PADDING_CHARACTERS);
    expect(detail.body.data).toMatchObject({ outputCount: 3, supportedPhases: ['SPEC', 'CHECK', 'DISCOVER', 'PLAN', 'VALIDATE', 'APPLY', 'VERIFY'] });
  });
});
