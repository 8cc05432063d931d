import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltInKits } from '../../control-plane/domains/kits/builtin-kits.ts';
import { call } from '../helpers/http.ts';
import { sampleKit } from '../helpers/kit-fixtures.ts';
import { whileTransactionHolds } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

let app: TestApp;
let key: string;
let orgId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

beforeAll(async () => {
  app = await startTestApp();
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

const publish = (body: unknown, apiKey = key, org = orgId) => call(app.url, `/api/${org}/kits`, { apiKey, body });

describe('publishing kits', () => {
  it('publishes a version and lists it beside the built-in kits', async () => {
    const response = await publish(sampleKit());
    expect(response.status, response.text).toBe(201);
    expect(response.body.data).toMatchObject({ kitId: 'service-starter', version: '1.0.0', displayName: 'Service starter', status: 'active' });
    const listed = await call(app.url, `/api/${orgId}/kits`, { apiKey: key });
    const own = listed.body.data.kits.find((kit: { kitId: string }) => kit.kitId === 'service-starter');
    expect(own).toMatchObject({ version: '1.0.0', kitType: 'file', status: 'active', outputCount: 3, builtIn: false, supportedPhases: ['SPEC', 'CHECK', 'DISCOVER', 'PLAN', 'VALIDATE', 'APPLY', 'VERIFY'] });
    expect(listed.body.data.total).toBe(listed.body.data.kits.length);
  });

  it('refuses the same kit id and version again, and keeps versions immutable', async () => {
    const again = await publish(sampleKit());
    expect(again.status).toBe(409);
    // The very package again (a publish retried after its answer was lost) is told so, in details a client acts on.
    expect(again.body.error).toEqual({
      code: 'CONFLICT',
      message: 'Kit service-starter version 1.0.0 is already published, with this very package (a publish retried after its answer was lost?): it is in place, and nothing changed',
      details: { samePackage: true, published: expect.objectContaining({ kitId: 'service-starter', version: '1.0.0' }) },
    });
    const changedKit = sampleKit();
    changedKit.manifest.metadata.description = 'Changed since 1.0.0 was published';
    const changed = await publish(changedKit);
    expect([changed.status, changed.body.error]).toEqual([409, { code: 'CONFLICT', message: 'Kit service-starter version 1.0.0 is already published; versions are immutable — publish a new version' }]);
    expect((await publish(sampleKit({ version: '1.1.0' }))).status).toBe(201);
    const detail = await call(app.url, `/api/${orgId}/kits/service-starter`, { apiKey: key });
    expect(detail.body.data).toMatchObject({ kitId: 'service-starter', version: '1.1.0', manifest: { metadata: { version: '1.1.0' } } });
    expect(detail.body.data.versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0', '1.1.0']);
    await expect(sqlAsOwner(`update kit_versions set checksum = 'x'`)).rejects.toThrow(/immutable/);
  });

  it('rejects a template or schema that does not compile, a hook without its phase function, or a missing file, naming the file — and stores nothing', async () => {
    const before = [await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')];
    const badTemplate = sampleKit({ id: 'broken-kit' });
    badTemplate.files['templates/readme.md.hbs'] = '{{#each items}}never closed';
    const badSchema = sampleKit({ id: 'broken-kit' });
    badSchema.files['schemas/openapi.schema.json'] = '{"type": "nonsense-type"}';
    const missing = sampleKit({ id: 'broken-kit' });
    delete missing.files['templates/compose.yml.hbs'];
    // The SPEC phase calls spec(context, kit); this hook would fail every run.
    const misnamedHook = sampleKit({ id: 'broken-kit' });
    misnamedHook.files['hooks/spec.js'] = 'function specification(context) {\n  return {};\n}\n';
    // Compiles, but every run would fail it: "The partial nothere could not be found".
    const missingPartial = sampleKit({ id: 'broken-kit' });
    missingPartial.files['templates/compose.yml.hbs'] += '{{> nothere}}\n';
    const cases = [
      [badTemplate, 'templates/readme.md.hbs'],
      [badSchema, 'schemas/openapi.schema.json'],
      [missing, 'templates/compose.yml.hbs'],
      [misnamedHook, 'hooks/spec.js'],
      [missingPartial, 'templates/compose.yml.hbs'],
    ] as const;
    for (const [body, file] of cases) {
      const response = await publish(body);
      expect(response.status, file).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
      expect(response.body.error.message).toContain(file);
      expect(response.body.error.details.problems.map((p: { file: string }) => p.file)).toContain(file);
    }
    const badManifest = await publish({ manifest: { metadata: { id: 'NOT A SLUG' } }, files: {} });
    expect(badManifest.status).toBe(400);
    expect([await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')]).toEqual(before);
  });

  it('refuses NUL characters and unpaired surrogates in the manifest or a file by field, not with a 500, and stores nothing', async () => {
    const before = [await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')];
    const inManifest = sampleKit({ id: 'nul-manifest' });
    inManifest.manifest.metadata.description = 'Starts\u0000 a service';
    const inFile = sampleKit({ id: 'nul-file' });
    inFile.files['hooks/spec.js'] += '\n// \u0000\n';
    const surrogate = sampleKit({ id: 'surrogate-manifest' });
    surrogate.manifest.platform.name = 'generic \udc00';
    for (const [body, field] of [[inManifest, 'manifest.metadata.description'], [inFile, 'files.hooks/spec.js'], [surrogate, 'manifest.platform.name']] as const) {
      const response = await publish(body);
      expect(response.status, response.text).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
      expect(response.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual([field]);
    }
    expect([await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')]).toEqual(before);
  });

  it('refuses a version longer than semver allows, so later versions of the kit can still be published', async () => {
    const long = await publish(sampleKit({ id: 'long-version', version: `1.0.0-${'a'.repeat(300)}` }));
    expect(long.status, long.text).toBe(400);
    expect(long.body.error.code).toBe('VALIDATION_ERROR');
    expect(long.body.error.details.problems).toEqual([{ file: 'kit.json', message: expect.stringContaining('metadata.version') }]);
    expect((await publish(sampleKit({ id: 'long-version', version: '1.0.0' }))).status).toBe(201);
    expect((await publish(sampleKit({ id: 'long-version', version: '1.0.1' }))).status).toBe(201);
  });

  it('refuses a platform name or category longer than a display name, which every kit list row would carry', async () => {
    const long = sampleKit({ id: 'long-platform' });
    long.manifest.platform.name = 'n'.repeat(200_000);
    const refused = await publish(long);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.error.code).toBe('VALIDATION_ERROR');
    expect(refused.body.error.details.problems).toEqual([{ file: 'kit.json', message: 'platform.name: Too big: expected string to have <=200 characters' }]);
    long.manifest.platform.name = 'n'.repeat(200);
    expect((await publish(long)).status).toBe(201);
  });

  it('refuses major, minor or patch numbers beyond what semver can order, before and after a kit has versions, and stores nothing', async () => {
    const versionsBefore = await countRows(app.database.ownerUrl, 'kit_versions');
    for (const version of ['99999999999999999999.0.0', '1.9007199254740992.0', '1.0.10000000000000000']) {
      const refused = await publish(sampleKit({ id: 'huge-version', version }));
      expect([refused.status, refused.body.error?.code], version).toEqual([400, 'VALIDATION_ERROR']);
      expect(refused.body.error.details.problems).toEqual([{ file: 'kit.json', message: expect.stringContaining('metadata.version') }]);
    }
    expect((await publish(sampleKit({ id: 'huge-version', version: `${Number.MAX_SAFE_INTEGER}.0.0` }))).status).toBe(201);
    // Publishing beside it compares versions, which must not fail.
    expect((await publish(sampleKit({ id: 'huge-version', version: '1.0.0' }))).status).toBe(201);
    const refused = await publish(sampleKit({ id: 'huge-version', version: '9007199254740993.0.0' }));
    expect(refused.status, refused.text).toBe(400);
    expect(await countRows(app.database.ownerUrl, 'kit_versions')).toBe(versionsBefore + 2);
    const listed = await call(app.url, `/api/${orgId}/kits/huge-version`, { apiKey: key });
    expect(listed.body.data.version).toBe(`${Number.MAX_SAFE_INTEGER}.0.0`);
  });

  it('ranks a stored latest version that semver cannot order below a new one, instead of answering 500', async () => {
    expect((await publish(sampleKit({ id: 'stored-huge', version: '1.0.0' }))).status).toBe(201);
    // As a publish before versions were bounded could store it.
    await sqlAsOwner(`
      alter table kit_versions disable trigger kit_versions_immutable;
      update kit_versions set version = '99999999999999999999.0.0' where kit_row_id = (select id from kits where kit_id = 'stored-huge');
      alter table kit_versions enable trigger kit_versions_immutable;`);
    const next = await publish(sampleKit({ id: 'stored-huge', version: '1.0.1' }));
    expect(next.status, next.text).toBe(201);
    expect((await call(app.url, `/api/${orgId}/kits/stored-huge`, { apiKey: key })).body.data.version).toBe('1.0.1');
  });

  it('refuses kit ids that name the routes beside GET /kits/{kitId}, where the kit could never be read', async () => {
    const before = [await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')];
    for (const id of ['executions', 'credentials']) {
      const response = await publish(sampleKit({ id }));
      expect(response.status, response.text).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
      expect(response.body.error.message).toContain('metadata.id');
      expect(response.body.error.details.problems).toEqual([{ file: 'kit.json', message: expect.stringContaining(`"${id}" is reserved`) }]);
    }
    expect([await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')]).toEqual(before);
  });

  it('takes kit packages above the 1 MiB JSON limit up to UPLOAD_LIMIT_BYTES, and answers 413 beyond', async () => {
    const large = sampleKit({ id: 'large-kit' });
    large.files['templates/readme.md.hbs'] += `\n${'Lorem ipsum dolor sit amet. '.repeat(55_000)}\n`; // ~1.5 MB: above the JSON limit, under the runtime's 2 MiB per file
    const accepted = await publish(large);
    expect(accepted.status, accepted.text.slice(0, 300)).toBe(201);
    // The same route spelled with a trailing slash has the same limit.
    const slashed = sampleKit({ id: 'large-kit-slashed' });
    slashed.files['templates/readme.md.hbs'] = large.files['templates/readme.md.hbs']!;
    const viaSlash = await call(app.url, `/api/${orgId}/kits/`, { apiKey: key, body: slashed });
    expect(viaSlash.status, viaSlash.text.slice(0, 300)).toBe(201);
    const huge = sampleKit({ id: 'huge-kit' });
    huge.files['templates/readme.md.hbs'] += 'x'.repeat(11 * 1024 * 1024);
    const refused = await publish(huge);
    expect(refused.status).toBe(413);
    expect(refused.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    // Every other route keeps the 1 MiB limit.
    expect((await call(app.url, '/api/projects', { apiKey: key, body: { name: 'x', description: 'y'.repeat(1_100_000) } })).status).toBe(413);
  });

  it('refuses a composite whose components could never run: not published here, no such version, or itself', async () => {
    const composite = (id: string, components: unknown[]) => ({
      manifest: {
        metadata: { id, displayName: id, version: '1.0.0', description: 'test', author: 'test', kitType: 'composite' },
        platform: { name: 'none', category: 'test' },
        phases: ['PLAN'],
        discovery: { pools: [] },
        outputs: [{ id: 'index', filename: 'INDEX.md', template: 't/index.hbs', outputType: 'markdown' }],
        components,
      },
      files: { 't/index.hbs': '# index\n' },
    });
    const before = [await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')];
    const cases: Array<[unknown[], string]> = [
      [[{ kitId: 'nowhere-kit', prefix: 'a' }], 'components[0]: no kit "nowhere-kit" is published in this organization or built in'],
      [[{ kitId: 'project-docs', version: '9.9.9', prefix: 'a' }], 'components[0]: kit "project-docs" has no version 9.9.9'],
      [[{ kitId: 'project-docs', prefix: 'a' }, { kitId: 'bundle-of-itself', prefix: 'b' }], 'components[1]: a composite cannot include itself'],
    ];
    for (const [components, message] of cases) {
      const refused = await publish(composite('bundle-of-itself', components));
      expect([refused.status, refused.body.error?.details?.problems]).toEqual([400, [{ file: 'kit.json', message }]]);
    }
    expect([await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')]).toEqual(before);
    const accepted = await publish(composite('docs-bundle', [{ kitId: 'project-docs', prefix: 'docs' }, { kitId: 'service-starter', version: '1.0.0', prefix: 'svc' }]));
    expect(accepted.status, accepted.text).toBe(201);
  });

  it('refuses an unauthenticated upload before reading its body: even a malformed one is UNAUTHORIZED', async () => {
    for (const headers of [{}, { 'x-api-key': 'swk_made_up_key' }] as Array<Record<string, string>>) {
      const response = await call(app.url, `/api/${orgId}/kits`, { method: 'POST', rawBody: `{"manifest": ${'x'.repeat(3 * 1024 * 1024)}`, headers: { 'content-type': 'application/json', ...headers } });
      expect([response.status, response.body?.error?.code]).toEqual([401, 'UNAUTHORIZED']);
    }
  });

  it('stores two versions of a new kit published at the same moment, instead of refusing one as already published', async () => {
    // The first publish has created the kit row, not committed yet, when the second arrives.
    const second = await whileTransactionHolds(
      app.database.ownerUrl,
      (holder) =>
        holder.query(
          `insert into kits (tenant_id, organization_id, kit_id, display_name, description, kit_type, platform_name, platform_category)
           select tenant_id, id, 'twin-first', 'Twin', 'first publish in flight', 'file', 'none', 'test' from organizations where id = $1`,
          [orgId],
        ),
      () => call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'twin-first', version: '2.0.0' }) }),
    );
    expect(second.status, second.text).toBe(201);
    const first = await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'twin-first', version: '1.0.0' }) });
    expect(first.status, first.text).toBe(201);
    const detail = (await call(app.url, `/api/${orgId}/kits/twin-first`, { apiKey: key })).body.data;
    expect([detail.version, detail.versions.map((v: { version: string }) => v.version).sort()]).toEqual(['2.0.0', ['1.0.0', '2.0.0']]);
  });

  it('lets admins deprecate a kit, filters by status and type, and keeps built-ins read-only', async () => {
    const typo = await call(app.url, `/api/${orgId}/kits/service-starter`, { method: 'PATCH', apiKey: key, body: { status: 'deprecated', bogus: 1 } });
    expect([typo.status, typo.body.error.details.issues]).toEqual([400, [{ field: 'bogus', issue: 'is not a field that can be set here' }]]);
    expect((await call(app.url, `/api/${orgId}/kits/service-starter`, { apiKey: key })).body.data.status).toBe('active');
    const deprecated = await call(app.url, `/api/${orgId}/kits/service-starter`, { method: 'PATCH', apiKey: key, body: { status: 'deprecated' } });
    expect(deprecated.status).toBe(200);
    expect(deprecated.body.data.status).toBe('deprecated');
    const onlyDeprecated = await call(app.url, `/api/${orgId}/kits?status=deprecated`, { apiKey: key });
    expect(onlyDeprecated.body.data.kits.map((k: { kitId: string }) => k.kitId)).toEqual(['service-starter']);
    const composite = await call(app.url, `/api/${orgId}/kits?type=composite&status=deprecated`, { apiKey: key });
    expect(composite.body.data).toMatchObject({ kits: [], total: 0 });
    const [builtIn] = await sqlAsOwner(`select kit_id from kits where organization_id is null limit 1`);
    if (builtIn) {
      const refused = await call(app.url, `/api/${orgId}/kits/${builtIn.kit_id}`, { method: 'PATCH', apiKey: key, body: { status: 'deprecated' } });
      expect(refused.status).toBe(403);
    }
  });

  it('is for admins: members may read but not publish', async () => {
    const member = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Mel');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`, [app.bootstrap.tenantId, orgId, member.userId]);
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: member.apiKey })).status).toBe(200);
    expect((await publish(sampleKit({ id: 'by-member' }), member.apiKey)).status).toBe(403);
  });
});

describe('the kits_enabled flag', () => {
  it('answers FORBIDDEN naming the flag until a platform admin switches it on', async () => {
    const tenant = await createTenant(app, 'Flagless');
    const off = await call(app.url, `/api/${tenant.organizationId}/kits`, { apiKey: tenant.apiKey });
    expect(off.status).toBe(403);
    expect(off.body.error).toMatchObject({ code: 'FORBIDDEN', details: { featureFlag: 'kits_enabled' } });
    expect(off.body.error.message).toContain('kits_enabled');
    expect((await publish(sampleKit({ id: 'flagless' }), tenant.apiKey, tenant.organizationId)).status).toBe(403);

    const byTenantOwner = await call(app.url, `/api/admin/tenants/${tenant.tenantId}/features`, { method: 'PATCH', apiKey: tenant.apiKey, body: { kits_enabled: true } });
    expect(byTenantOwner.status).toBe(403);
    const switched = await call(app.url, `/api/admin/tenants/${tenant.tenantId}/features`, { method: 'PATCH', apiKey: key, body: { kits_enabled: true } });
    expect(switched.status).toBe(200);
    expect(switched.body.data.features.kits_enabled).toBe(true);
    expect((await call(app.url, `/api/${tenant.organizationId}/kits`, { apiKey: tenant.apiKey })).status).toBe(200);
    // The tenant sees the built-in kits, and none of the first tenant's own.
    const kits = (await call(app.url, `/api/${tenant.organizationId}/kits`, { apiKey: tenant.apiKey })).body.data.kits;
    expect(kits.every((kit: { builtIn: boolean }) => kit.builtIn)).toBe(true);
  });
});

describe('the latest version', () => {
  const latestOf = async (kitId: string) => {
    const detail = await call(app.url, `/api/${orgId}/kits/${kitId}`, { apiKey: key });
    const listed = (await call(app.url, `/api/${orgId}/kits?limit=200`, { apiKey: key })).body.data.kits.find((kit: { kitId: string }) => kit.kitId === kitId);
    return { detail: detail.body.data, listed };
  };

  it('is the highest version by semver precedence, not the last one published', async () => {
    const newest = sampleKit({ id: 'ordered-kit', version: '2.0.0' });
    newest.manifest.metadata.displayName = 'Ordered kit 2';
    expect((await publish(newest)).status).toBe(201);
    // A patch of the old line, a prerelease of the current one and a build of it, published afterwards.
    for (const version of ['1.0.1', '2.0.0-rc.1', '2.0.0+build.7', '1.10.0']) {
      const older = sampleKit({ id: 'ordered-kit', version });
      older.manifest.metadata.displayName = `Ordered kit ${version}`;
      const response = await publish(older);
      expect(response.status, response.text).toBe(201);
      expect(response.body.data.version).toBe(version);
    }
    const { detail, listed } = await latestOf('ordered-kit');
    expect(detail).toMatchObject({ version: '2.0.0', displayName: 'Ordered kit 2', manifest: { metadata: { version: '2.0.0' } } });
    expect(listed).toMatchObject({ version: '2.0.0', displayName: 'Ordered kit 2' });
    expect(detail.versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0', '1.0.1', '2.0.0-rc.1', '2.0.0+build.7', '1.10.0']);

    expect((await publish(sampleKit({ id: 'ordered-kit', version: '2.0.1' }))).status).toBe(201);
    expect((await latestOf('ordered-kit')).listed.version).toBe('2.0.1');
  });

  it('is the highest version for built-in kits too, when boot registers an older one after a newer one', async () => {
    const kitDirectory = async (version: string) => {
      const directory = await scratchDir('builtin-kits');
      const kit = sampleKit({ id: 'boot-kit', version });
      kit.manifest.metadata.displayName = `Boot kit ${version}`;
      await mkdir(join(directory, 'boot-kit'));
      await writeFile(join(directory, 'boot-kit', 'kit.json'), JSON.stringify(kit.manifest));
      for (const [path, text] of Object.entries(kit.files)) {
        await mkdir(dirname(join(directory, 'boot-kit', path)), { recursive: true });
        await writeFile(join(directory, 'boot-kit', path), text);
      }
      return directory;
    };
    const { db } = app.service.owner;
    expect(await registerBuiltInKits(db, app.service.log, await kitDirectory('2.0.0'))).toEqual(['boot-kit@2.0.0']);
    expect(await registerBuiltInKits(db, app.service.log, await kitDirectory('1.4.0'))).toEqual(['boot-kit@1.4.0']);
    const { detail, listed } = await latestOf('boot-kit');
    expect(detail).toMatchObject({ builtIn: true, version: '2.0.0', displayName: 'Boot kit 2.0.0', manifest: { metadata: { version: '2.0.0' } } });
    expect(listed).toMatchObject({ version: '2.0.0', displayName: 'Boot kit 2.0.0' });
    expect(detail.versions.map((v: { version: string }) => v.version)).toEqual(['2.0.0', '1.4.0']);
  });
});
