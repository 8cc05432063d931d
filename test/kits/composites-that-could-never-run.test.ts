import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { compositeKit as composite, storedKitCounts } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * README, Kits: a composite's components must be kits the organization can run, and not the
 * composite itself. A run walks components below components (kit-runtime's composeComponents) and
 * fails when a kit comes round again below itself or composites nest past its limit, so a composite
 * that leads back to itself through another composite, or nests too deep, could never run once: the
 * publish is refused, naming the chain, instead of answering 201 and failing every execution.
 */
let app: TestApp;
let key: string;
let orgId: string;

beforeAll(async () => {
  app = await startTestApp();
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

const publish = (body: unknown) => call(app.url, `/api/${orgId}/kits`, { apiKey: key, body });
const storedKits = () => storedKitCounts(app.database.ownerUrl);

async function expectRefused(body: unknown, message: string) {
  const before = await storedKits();
  const refused = await publish(body);
  expect([refused.status, refused.body.error?.code, refused.body.error?.details?.problems]).toEqual([400, 'VALIDATION_ERROR', [{ file: 'kit.json', message }]]);
  expect(await storedKits()).toEqual(before);
}

describe('publishing a composite', () => {
  it('refuses one that would include itself through another composite, unpinned or pinned, and stores nothing', async () => {
    expect((await publish(composite('outer', '1.0.0', [{ kitId: 'project-docs' }]))).status).toBe(201);
    expect((await publish(composite('inner', '1.0.0', [{ kitId: 'outer' }]))).status).toBe(201);
    expect((await publish(composite('pinned-inner', '1.0.0', [{ kitId: 'outer', version: '1.0.0' }]))).status).toBe(201);

    await expectRefused(composite('outer', '2.0.0', [{ kitId: 'inner' }]), 'components[0]: kit "outer" would include itself: outer → inner → outer');
    // A run compares kit ids, not versions: outer@1.0.0 below outer@1.1.0 fails the run as well.
    await expectRefused(composite('outer', '1.1.0', [{ kitId: 'project-docs' }, { kitId: 'pinned-inner' }]), 'components[1]: kit "outer" would include itself: outer → pinned-inner → outer');
    expect((await call(app.url, `/api/${orgId}/kits/outer`, { apiKey: key })).body.data.versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0']);
  });

  it('refuses composites nested deeper than a run goes, and takes the deepest it does', async () => {
    expect((await publish(composite('level-1', '1.0.0', [{ kitId: 'project-docs' }]))).status).toBe(201);
    expect((await publish(composite('level-2', '1.0.0', [{ kitId: 'level-1' }]))).status).toBe(201);
    expect((await publish(composite('level-3', '1.0.0', [{ kitId: 'level-2' }]))).status).toBe(201);
    await expectRefused(composite('level-4', '1.0.0', [{ kitId: 'level-3' }]), 'components[0]: composites would nest 4 deep, and a run allows 3: level-4 → level-3 → level-2 → level-1');
  });

  it('still refuses itself and missing components as before, and takes a composite naming the same kit twice', async () => {
    await expectRefused(composite('twice', '1.0.0', [{ kitId: 'twice' }]), 'components[0]: a composite cannot include itself');
    await expectRefused(composite('twice', '1.0.0', [{ kitId: 'project-docs', version: '9.9.9' }]), 'components[0]: kit "project-docs" has no version 9.9.9');
    const accepted = await publish(composite('twice', '1.0.0', [{ kitId: 'level-1' }, { kitId: 'level-1', version: '1.0.0' }, { kitId: 'project-docs' }]));
    expect(accepted.status, accepted.text).toBe(201);
  });
});
