import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDownloadLinks } from '../../control-plane/http/download-links.ts';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { createTenant } from '../helpers/tenant-fixtures.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Who an export link serves. README, Export packs: the link "serves the ZIP to whoever asked, while
 * their API key is active and they still see the project". A link POST /exports/download answers
 * must be one that can serve; and a link naming a part its specification was never compiled with
 * serves no pack the POST would have refused.
 */
let app: TestApp;
let other: Awaited<ReturnType<typeof createTenant>>;
let projectId: string;
let specId: string;

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_COMPILATION_PER_MINUTE: '1000' } });
  other = await createTenant(app, 'Exported elsewhere');
  projectId = await flowWalker(app, other.apiKey, other.organizationId).finishedProject('Their clinic');
  const queued = await call(app.url, '/api/specification/compile', { apiKey: other.apiKey, body: { projectId, options: {} } });
  expect(queued.status, queued.text).toBe(202);
  specId = queued.body.data.specId;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    if ((await call(app.url, `/api/specification/${specId}`, { apiKey: other.apiKey })).body.data.status === 'completed') return;
  }
  throw new Error('not compiled within 30 s');
}, 120_000);
afterAll(() => app?.stop());

describe('export links and their holders', () => {
  it('are not handed to a platform admin acting in another tenant, where they could never serve', async () => {
    const asked = await call(app.url, '/api/exports/download', { apiKey: app.bootstrap.apiKey, headers: { 'x-tenant-id': other.tenantId }, body: { projectId, format: 'json' } });
    if (asked.status === 200) {
      // What the original answered: a link, refused on its first download.
      const download = await call(app.url, asked.body.data.downloadUrl);
      expect(download.status, 'a link handed out must serve its holder').toBe(200);
    }
    expect([asked.status, asked.body.error?.code], asked.text).toEqual([403, 'FORBIDDEN']);
    expect(asked.body.error.message).toContain(`GET /specification/${specId}`);
    // The admin still reads the specification itself there.
    expect((await call(app.url, `/api/specification/${specId}`, { apiKey: app.bootstrap.apiKey, headers: { 'x-tenant-id': other.tenantId } })).status).toBe(200);
  });

  it('serve no task graph or runbook the specification was not compiled with (NOT_FOUND, never a made-up file)', async () => {
    const good = await call(app.url, '/api/exports/download', { apiKey: other.apiKey, body: { projectId, format: 'markdown' } });
    expect(good.status, good.text).toBe(200);
    const holder = { userId: (await call(app.url, '/api/me', { apiKey: other.apiKey })).body.data.userId };
    // A link as an operator's script (a SERVER_SECRET holder) might sign it: parts the pack cannot have.
    const links = createDownloadLinks(TEST_SERVER_SECRET);
    for (const include of [['spec', 'taskGraph'], ['runbook']] as const) {
      const forged = links.create({ kind: 'export', tenantId: other.tenantId, holder, projectId, specificationId: specId, format: 'markdown', include: [...include], filename: 'pack.zip' });
      const response = await call(app.url, forged.path);
      expect([response.status, response.body?.error?.code], response.text.slice(0, 200)).toEqual([404, 'NOT_FOUND']);
    }
  });
});
