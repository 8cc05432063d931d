import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { call } from '../helpers/http.ts';
import { compositeKit as composite, sampleKit, storedKitCounts } from '../helpers/kit-fixtures.ts';
import { whileTransactionHolds } from '../helpers/lock-holder.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * README, Kits: composites nest at most 3 deep. A composite that names a component without a
 * version runs the component's latest version, so publishing a new latest version that has
 * components of its own nests every composite above it one level deeper or more. Such a version is
 * refused when a published composite would then nest deeper than a run allows (every run of it would
 * fail), naming the chain; a version that does not become latest, or that composites reach only
 * pinned to another version, is published. Two publishes racing (one of the component, one of a
 * composite naming it) take turns, so the later one is checked against what the earlier stored.
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
const versionsOf = async (kitId: string) => {
  const kit = (await call(app.url, `/api/${orgId}/kits/${kitId}`, { apiKey: key })).body.data;
  return { latest: kit.version, versions: kit.versions.map((v: { version: string }) => v.version) };
};

async function published(...bodies: unknown[]) {
  for (const body of bodies) {
    const answer = await publish(body);
    expect(answer.status, answer.text).toBe(201);
  }
}

function expectRefusal(answer: Awaited<ReturnType<typeof publish>>, message: string) {
  expect([answer.status, answer.body.error?.code, answer.body.error?.details?.problems]).toEqual([400, 'VALIDATION_ERROR', [{ file: 'kit.json', message }]]);
}

const wouldBreak = (id: string, namer: string, chain: string) =>
  `this version would become the latest "${id}", which the published composite "${namer}" runs as it names "${id}" without a version: ` +
  `composites would nest 4 deep, and a run allows 3: ${chain}; publish "${namer}" pinning the version of "${id}" it runs first`;

/** As the owner, in the holder's transaction: a version stored and made latest, as a publish in flight would. */
async function storeVersionInFlight(holder: pg.Client, body: { manifest: { metadata: { id: string; version: string } } }) {
  const { id, version } = body.manifest.metadata;
  const [stored] = (
    await holder.query(
      `insert into kit_versions (tenant_id, kit_row_id, version, manifest, files, checksum)
       select tenant_id, id, $3, $4::jsonb, '{}'::jsonb, 'in flight' from kits where organization_id = $1 and kit_id = $2 returning id, kit_row_id`,
      [orgId, id, version, JSON.stringify(body.manifest)],
    )
  ).rows;
  await holder.query('update kits set latest_version_id = $1 where id = $2', [stored.id, stored.kit_row_id]);
}

describe('publishing a new version of a component', () => {
  it('refuses a latest version with components that a published composite would run nested too deep, and stores nothing', async () => {
    await published(sampleKit({ id: 'leaf' }), composite('low', '1.0.0', [{ kitId: 'leaf' }]), composite('mid', '1.0.0', [{ kitId: 'low' }]), composite('top', '1.0.0', [{ kitId: 'mid' }]));
    const before = await storedKits();

    expectRefusal(await publish(composite('leaf', '2.0.0', [{ kitId: 'project-docs' }])), wouldBreak('leaf', 'low', 'top → mid → low → leaf'));
    expect(await storedKits()).toEqual(before);
    expect(await versionsOf('leaf')).toEqual({ latest: '1.0.0', versions: ['1.0.0'] });
  });

  it('follows composites pinned to a version that names the component without one', async () => {
    await published(
      sampleKit({ id: 'p-leaf' }),
      composite('p-low', '1.0.0', [{ kitId: 'p-leaf' }]),
      composite('p-low', '1.1.0', [{ kitId: 'p-leaf', version: '1.0.0' }]),
      composite('p-mid', '1.0.0', [{ kitId: 'p-low', version: '1.0.0' }]),
      composite('p-top', '1.0.0', [{ kitId: 'p-mid' }]),
    );
    expectRefusal(await publish(composite('p-leaf', '2.0.0', [{ kitId: 'project-docs' }])), wouldBreak('p-leaf', 'p-low', 'p-top → p-mid → p-low → p-leaf'));
  });

  it('publishes it once the composite pins the version it runs, and publishes versions no composite would run', async () => {
    await published(sampleKit({ id: 'f-leaf' }), composite('f-low', '1.0.0', [{ kitId: 'f-leaf' }]), composite('f-mid', '1.0.0', [{ kitId: 'f-low' }]), composite('f-top', '1.0.0', [{ kitId: 'f-mid' }]));
    // Plain kits nest nothing; a lower version never becomes the one unpinned names run.
    await published(sampleKit({ id: 'f-leaf', version: '1.5.0' }), composite('f-leaf', '0.9.0', [{ kitId: 'project-docs' }]));
    // Pinned in f-low's latest, f-leaf's next version reaches f-top only through f-low 1.0.0, which nothing runs below another composite.
    await published(composite('f-low', '1.1.0', [{ kitId: 'f-leaf', version: '1.5.0' }]), composite('f-leaf', '2.0.0', [{ kitId: 'project-docs' }]));
    expect(await versionsOf('f-leaf')).toEqual({ latest: '2.0.0', versions: ['1.0.0', '1.5.0', '0.9.0', '2.0.0'] });
  });
});

describe('two publishes racing', () => {
  it('checks a new component version against a composite naming it whose publish commits first', async () => {
    await published(
      sampleKit({ id: 's-leaf' }),
      composite('s-low', '1.0.0', [{ kitId: 's-leaf', version: '1.0.0' }]),
      composite('s-mid', '1.0.0', [{ kitId: 's-low' }]),
      composite('s-top', '1.0.0', [{ kitId: 's-mid' }]),
    );
    const answer = await whileTransactionHolds(
      app.database.ownerUrl,
      async (holder) => {
        // A publish of s-low 1.1.0 (unpinned) in flight: it checked s-leaf, holding it, and stored itself.
        await holder.query(`select id from kits where organization_id = $1 and kit_id = 's-leaf' for share`, [orgId]);
        await storeVersionInFlight(holder, composite('s-low', '1.1.0', [{ kitId: 's-leaf' }]));
      },
      () => publish(composite('s-leaf', '2.0.0', [{ kitId: 'project-docs' }])),
    );
    expectRefusal(answer, wouldBreak('s-leaf', 's-low', 's-top → s-mid → s-low → s-leaf'));
  });

  it('checks a composite against a new version of its component whose publish commits first', async () => {
    await published(
      sampleKit({ id: 'r-leaf' }),
      composite('r-low', '1.0.0', [{ kitId: 'r-leaf', version: '1.0.0' }]),
      composite('r-mid', '1.0.0', [{ kitId: 'r-low' }]),
      composite('r-top', '1.0.0', [{ kitId: 'r-mid' }]),
    );
    const answer = await whileTransactionHolds(
      app.database.ownerUrl,
      async (holder) => {
        // A publish of r-leaf 2.0.0, now a composite, in flight: it holds its kit and stored itself.
        await holder.query(`select id from kits where organization_id = $1 and kit_id = 'r-leaf' for update`, [orgId]);
        await storeVersionInFlight(holder, composite('r-leaf', '2.0.0', [{ kitId: 'project-docs' }]));
      },
      () => publish(composite('r-low', '1.1.0', [{ kitId: 'r-leaf' }])),
    );
    expectRefusal(answer, wouldBreak('r-low', 'r-mid', 'r-top → r-mid → r-low → r-leaf'));
  });
});
