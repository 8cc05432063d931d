import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleKit, storedKitCounts } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
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

const publish = (body: unknown) => call(app.url, `/api/${orgId}/kits`, { apiKey: key, body });
const inPlace = (kitId: string) =>
  `Kit ${kitId} version 1.0.0 is already published, with this very package (a publish retried after its answer was lost?): it is in place, and nothing changed`;

/** The same object with its keys written in the opposite order, at every depth. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([name, child]) => [name, reversedKeys(child)]));
}

describe('the very package published again', () => {
  it('is a CONFLICT whose details say so (samePackage) and hold what the first publish answered; a changed package under that version carries none', async () => {
    const kit = sampleKit({ id: 'retried-kit' });
    const first = await publish(kit);
    expect(first.status, first.text).toBe(201);
    const again = await publish(kit);
    expect([again.status, again.body.error]).toEqual([409, { code: 'CONFLICT', message: inPlace('retried-kit'), details: { samePackage: true, published: first.body.data } }]);

    const changed = sampleKit({ id: 'retried-kit' });
    changed.manifest.metadata.description = 'Changed since 1.0.0 was published';
    const refused = await publish(changed);
    expect([refused.status, refused.body.error]).toEqual([409, { code: 'CONFLICT', message: 'Kit retried-kit version 1.0.0 is already published; versions are immutable — publish a new version' }]);
  });

  it('is told it is in place when a client writes its JSON keys in another order (they carry no meaning, and jsonb keeps none)', async () => {
    const kit = sampleKit({ id: 'reordered-kit' });
    expect((await publish(kit)).status).toBe(201);
    const before = await storedKitCounts(app.database.ownerUrl);
    const again = await publish(reversedKeys({ files: kit.files, manifest: kit.manifest }));
    expect([again.status, again.body.error?.message, again.body.error?.details?.samePackage]).toEqual([409, inPlace('reordered-kit'), true]);
    expect(await storedKitCounts(app.database.ownerUrl)).toEqual(before);

    // A changed package is still told versions are immutable, whatever its key order.
    const changed = sampleKit({ id: 'reordered-kit' });
    changed.manifest.metadata.description = 'Changed since 1.0.0 was published';
    const refused = await publish(reversedKeys(changed));
    expect([refused.status, refused.body.error?.message, refused.body.error?.details]).toEqual([409, 'Kit reordered-kit version 1.0.0 is already published; versions are immutable — publish a new version', undefined]);
  });

  it('is told it is in place for a version stored with the checksum of before (the keys as sent, the files by name)', async () => {
    const kit = sampleKit({ id: 'older-checksum' });
    expect((await publish(kit)).status).toBe(201);
    const sorted = Object.fromEntries(Object.keys(kit.files).sort().map((name) => [name, kit.files[name]]));
    const before = createHash('sha256').update(JSON.stringify({ manifest: kit.manifest, files: sorted })).digest('hex');
    // Versions are immutable: the owner lifts the trigger for this one statement.
    await ownerQuery(
      app.database.ownerUrl,
      `begin;
       alter table kit_versions disable trigger kit_versions_immutable;
       update kit_versions set checksum = '${before}' where kit_row_id = (select id from kits where kit_id = 'older-checksum');
       alter table kit_versions enable trigger kit_versions_immutable;
       commit`,
    );
    const again = await publish(kit);
    expect([again.status, again.body.error?.message, again.body.error?.details?.samePackage]).toEqual([409, inPlace('older-checksum'), true]);
  });
});
