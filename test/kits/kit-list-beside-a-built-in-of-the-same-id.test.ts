import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltInKits } from '../../control-plane/domains/kits/builtin-kits.ts';
import { call } from '../helpers/http.ts';
import { sampleKit } from '../helpers/kit-fixtures.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
let orgId: string;

beforeAll(async () => {
  app = await startTestApp();
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

/** A kits/ directory as a release ships it, holding one kit. */
async function builtInDirectory(kitId: string) {
  const directory = await scratchDir('builtin-kits');
  const kit = sampleKit({ id: kitId, version: '5.0.0' });
  kit.manifest.metadata.displayName = 'The built-in one';
  await mkdir(join(directory, kitId));
  await writeFile(join(directory, kitId, 'kit.json'), JSON.stringify(kit.manifest));
  for (const [path, text] of Object.entries(kit.files)) {
    await mkdir(dirname(join(directory, kitId, path)), { recursive: true });
    await writeFile(join(directory, kitId, path), text);
  }
  return directory;
}

const listed = async (query = '') => (await call(app.url, `/api/${orgId}/kits${query}`, { apiKey: key })).body.data;
const named = (page: { kits: Array<{ kitId: string }> }, kitId: string) => page.kits.filter((kit) => kit.kitId === kitId);

describe("the kit list of an organization whose own kit has the id a later release gives a built-in kit", () => {
  it('lists its own kit once under that id, as GET /kits/{kitId} answers it, never the built-in it cannot reach', async () => {
    const own = sampleKit({ id: 'house-kit' });
    own.manifest.metadata.displayName = 'Our own kit';
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: own })).status).toBe(201);
    const before = await listed();
    expect(await registerBuiltInKits(app.service.owner.db, app.service.log, await builtInDirectory('house-kit'))).toEqual(['house-kit@5.0.0']);

    const detail = (await call(app.url, `/api/${orgId}/kits/house-kit`, { apiKey: key })).body.data;
    expect(detail).toMatchObject({ builtIn: false, version: '1.0.0', displayName: 'Our own kit' });
    const after = await listed();
    const { manifest: _manifest, versions: _versions, ...summary } = detail;
    expect(named(after, 'house-kit')).toEqual([summary]);
    expect(after.total).toBe(before.total);

    // Deprecated, it is not listed as active under the built-in's row either.
    expect((await call(app.url, `/api/${orgId}/kits/house-kit`, { method: 'PATCH', apiKey: key, body: { status: 'deprecated' } })).status).toBe(200);
    expect(named(await listed('?status=active'), 'house-kit')).toEqual([]);
    expect(named(await listed('?status=deprecated'), 'house-kit')).toEqual([expect.objectContaining({ builtIn: false, displayName: 'Our own kit', status: 'deprecated' })]);
  });
});
