import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltInKits } from '../../control-plane/domains/kits/builtin-kits.ts';
import { call } from '../helpers/http.ts';
import { builtInKitsDirectory, sampleKit } from '../helpers/kit-fixtures.ts';
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

const listed = async (query = '') => (await call(app.url, `/api/${orgId}/kits${query}`, { apiKey: key })).body.data;
const named = (page: { kits: Array<{ kitId: string }> }, kitId: string) => page.kits.filter((kit) => kit.kitId === kitId);

describe("the kit list of an organization whose own kit has the id a later release gives a built-in kit", () => {
  it('lists its own kit once under that id, as GET /kits/{kitId} answers it, never the built-in it cannot reach', async () => {
    const own = sampleKit({ id: 'house-kit' });
    own.manifest.metadata.displayName = 'Our own kit';
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: own })).status).toBe(201);
    const before = await listed();
    expect(await registerBuiltInKits(app.service.owner.db, app.service.log, await builtInKitsDirectory('house-kit'))).toEqual(['house-kit@5.0.0']);

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
