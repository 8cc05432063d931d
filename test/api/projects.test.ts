import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { whileTransactionHolds } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';

let app: TestApp;
let key: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

beforeAll(async () => {
  // The snapshot test below sends a few hundred requests in a burst.
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
});
afterAll(() => app?.stop());

const createProject = async (body: Record<string, unknown>, apiKey = key) => {
  const response = await call(app.url, '/api/projects', { apiKey, body });
  expect(response.status, response.text).toBe(201);
  return response.body.data;
};

describe('POST /api/projects', () => {
  it('creates an active project in phase CREATED', async () => {
    const project = await createProject({ name: 'Pet clinic', description: 'Bookings for vets', template: 'saas', metadata: { source: 'test' } });
    expect(project).toMatchObject({ id: expect.any(String), name: 'Pet clinic', status: 'active', phase: 'CREATED', createdAt: expect.any(String), metadata: { source: 'test' } });
    const [row] = await sqlAsOwner('select tenant_id, phase, status, created_by from projects where id = $1', [project.id]);
    expect(row).toEqual({ tenant_id: app.bootstrap.tenantId, phase: 'CREATED', status: 'active', created_by: app.bootstrap.userId });
  });

  it('refuses bad input by field and writes nothing', async () => {
    const before = await countRows(app.database.ownerUrl, 'projects');
    const response = await call(app.url, '/api/projects', { apiKey: key, body: { name: '', phase: 'SPECIFICATION' } });
    expect(response.status).toBe(400);
    expect(response.body.error.details.issues.map((i: { field: string }) => i.field).sort()).toEqual(['name', 'phase']);
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(before);
  });

  it('caps metadata at 16 KiB of JSON on create and update, since every list page carries it', async () => {
    const before = await countRows(app.database.ownerUrl, 'projects');
    const oversized = { notes: 'x'.repeat(16_384) };
    const created = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Heavy', metadata: oversized } });
    expect([created.status, created.body.error.details.issues]).toEqual([400, [{ field: 'metadata', issue: 'must be at most 16384 bytes as JSON' }]]);
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(before);
    const fits = await createProject({ name: 'Light', metadata: { notes: 'x'.repeat(16_000) } });
    const patched = await call(app.url, `/api/projects/${fits.id}`, { method: 'PATCH', apiKey: key, body: { metadata: oversized } });
    expect([patched.status, patched.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect((await sqlAsOwner('select length(metadata::text) as size from projects where id = $1', [fits.id]))[0].size).toBeLessThan(16_384);
  });

  it('tells REST callers of the metadata cap in the OpenAPI document, on create and update', async () => {
    const document = (await call(app.url, '/api/openapi.json')).body;
    const bodyOf = (path: string, method: string) => document.paths[path][method].requestBody.content['application/json'].schema;
    for (const [path, method] of [['/projects', 'post'], ['/projects/{projectId}', 'patch']] as const) {
      expect(bodyOf(path, method).properties.metadata.description, `${method} ${path}`).toMatch(/At most 16384 bytes as JSON/);
    }
    expect(bodyOf('/projects', 'post').properties.organizationId.description).toMatch(/the first you joined as such when absent/);
  });

  it('counts metadata as PostgreSQL gives it back: with a space after every ":" and ","', async () => {
    // 12 KB as sent, 18 KB as read back.
    const spaced = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Spaced', metadata: { zeros: Array(6_000).fill(0) } } });
    expect([spaced.status, spaced.body.error?.details?.issues]).toEqual([400, [{ field: 'metadata', issue: 'must be at most 16384 bytes as JSON' }]]);
    const fits = await createProject({ name: 'Spaced fit', metadata: { zeros: Array(4_000).fill(0), pairs: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, i])) } });
    // 11 KB as sent, counted at 15,702 bytes: what PostgreSQL gives back, to the byte.
    expect((await sqlAsOwner('select octet_length(metadata::text) as size from projects where id = $1', [fits.id]))[0].size).toBe(15_702);
  });
});

describe('text PostgreSQL cannot store', () => {
  it('refuses the NUL character and unpaired surrogates by field on create and update, instead of failing with a 500, and writes nothing', async () => {
    const project = await createProject({ name: 'Clean', metadata: { keep: 'me' } });
    const before = await countRows(app.database.ownerUrl, 'projects');
    const attempts: Array<[string, Record<string, unknown>, string]> = [
      ['POST', { name: 'a\u0000b' }, 'name'],
      ['POST', { name: 'ok', description: 'nul \u0000 inside' }, 'description'],
      ['POST', { name: 'ok', template: 'saas\u0000' }, 'template'],
      ['POST', { name: 'ok', metadata: { nested: { list: ['fine', 'not\u0000fine'] } } }, 'metadata.nested.list.1'],
      ['POST', { name: 'ok', metadata: { nested: { 'key\u0000': 1 } } }, 'metadata.nested'],
      ['PATCH', { description: 'x\u0000' }, 'description'],
      ['PATCH', { metadata: { a: '\u0000' } }, 'metadata.a'],
      // An unpaired surrogate: jsonb refuses its escape, and text would silently store U+FFFD instead.
      ['POST', { name: 'ok', metadata: { half: 'x\ud800' } }, 'metadata.half'],
      ['PATCH', { name: 'half \udc00 a pair' }, 'name'],
    ];
    for (const [method, body, field] of attempts) {
      const path = method === 'POST' ? '/api/projects' : `/api/projects/${project.id}`;
      const response = await call(app.url, path, { method, apiKey: key, body });
      expect([response.status, response.body.error?.code], `${method} ${JSON.stringify(body)}`).toEqual([400, 'VALIDATION_ERROR']);
      expect(response.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual([field]);
    }
    expect(await countRows(app.database.ownerUrl, 'projects')).toBe(before);
    const [row] = await sqlAsOwner('select description, metadata, updated_at = created_at as untouched from projects where id = $1', [project.id]);
    expect(row).toEqual({ description: null, metadata: { keep: 'me' }, untouched: true });
  });
});

describe('GET /api/projects', () => {
  it('pages a stable order with totals and the list form of progress, and filters by status', async () => {
    const tenant = await createTenant(app, 'Lister');
    const ids = [];
    for (const name of ['a', 'b', 'c']) ids.push((await createProject({ name }, tenant.apiKey)).id);
    await sqlAsOwner(`update projects set created_at = '2026-01-01' where id = any($1)`, [ids]);
    const first = await call(app.url, '/api/projects?limit=2&offset=0', { apiKey: tenant.apiKey });
    const second = await call(app.url, '/api/projects?limit=2&offset=2', { apiKey: tenant.apiKey });
    expect(first.body.data).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect([...first.body.data.projects, ...second.body.data.projects].map((p: { id: string }) => p.id)).toEqual([...ids].sort());
    expect(first.body.data.projects[0].progress).toEqual({
      overall: 0, discovery: 0, featureSelection: 0, planGeneration: 0, planning: 0, visualDiscovery: 0, specification: 0,
    });
    await call(app.url, `/api/projects/${ids[0]}`, { method: 'PATCH', apiKey: tenant.apiKey, body: { status: 'archived' } });
    const archived = await call(app.url, '/api/projects?status=archived', { apiKey: tenant.apiKey });
    expect(archived.body.data.projects.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    expect((await call(app.url, '/api/projects?limit=201', { apiKey: tenant.apiKey })).status).toBe(400);
    expect((await call(app.url, '/api/projects?status=deleted', { apiKey: tenant.apiKey })).status).toBe(400);
  });

  it('takes status=all, the default the API reference names, as no filter on both surfaces, and documents it', async () => {
    const tenant = await createTenant(app, 'All statuses');
    const active = await createProject({ name: 'Open' }, tenant.apiKey);
    const archived = await createProject({ name: 'Shelved' }, tenant.apiKey);
    await call(app.url, `/api/projects/${archived.id}`, { method: 'PATCH', apiKey: tenant.apiKey, body: { status: 'archived' } });
    const all = await call(app.url, '/api/projects?status=all', { apiKey: tenant.apiKey });
    expect([all.status, all.body.data?.total], all.text).toEqual([200, 2]);
    expect(all.body.data.projects.map((p: { id: string }) => p.id).sort()).toEqual([active.id, archived.id].sort());
    const trpc = await call(app.url, `/trpc/projects.list?input=${encodeURIComponent(JSON.stringify({ status: 'all' }))}`, { apiKey: tenant.apiKey });
    expect([trpc.status, trpc.body.result?.data?.total], trpc.text).toEqual([200, 2]);
    const document = (await call(app.url, '/api/openapi.json')).body;
    const status = document.paths['/projects'].get.parameters.find((p: { name: string }) => p.name === 'status');
    expect(status.schema.enum).toEqual(['active', 'completed', 'archived', 'all']);
  });

  it('reads paging as whole numbers: decimal digits in a query, numbers in JSON, nothing else', async () => {
    for (const query of ['limit=0x10', 'limit=1e2', 'limit=%2012%20', 'offset=1.5', 'limit=-1']) {
      const response = await call(app.url, `/api/projects?${query}`, { apiKey: key });
      expect([response.status, response.body.error?.code], query).toEqual([400, 'VALIDATION_ERROR']);
    }
    expect((await call(app.url, '/api/projects?limit=7&offset=0', { apiKey: key })).body.data).toMatchObject({ limit: 7, offset: 0 });
    expect((await call(app.url, '/api/projects?limit=020&offset=9007199254740991', { apiKey: key })).body.data).toMatchObject({ limit: 20, offset: 9007199254740991 });
    const refused = await call(app.url, '/api/projects?limit=0x10', { apiKey: key });
    expect(refused.body.error.details.issues).toEqual([{ field: 'limit', issue: 'must be a whole number' }]);
    // A whole number out of range is told its range, not that it is no whole number.
    for (const [field, value, issue] of [['limit', '0', 'must be at least 1'], ['limit', '201', 'must be at most 200'], ['offset', '-1', 'must be at least 0'],
      ['offset', '99999999999999999', 'must be at most 9007199254740991'], ['offset', '9007199254740992', 'must be at most 9007199254740991'],
      ['limit', '99999999999999999', 'must be at most 200'], ['limit', '9'.repeat(400), 'must be at most 200'], ['limit', '-99999999999999999', 'must be at least 1']] as const) {
      const response = await call(app.url, `/api/projects?${field}=${value}`, { apiKey: key });
      expect(response.body.error.details.issues, value).toEqual([{ field, issue }]);
    }
    const trpc = (input: unknown) => call(app.url, `/trpc/projects.list?input=${encodeURIComponent(JSON.stringify(input))}`, { apiKey: key });
    for (const input of [{ limit: true }, { offset: [3] }, { limit: '0x10' }, { limit: null }]) {
      const response = await trpc(input);
      expect([response.status, response.body.error?.data?.code], JSON.stringify(input)).toEqual([400, 'VALIDATION_ERROR']);
    }
    expect((await trpc({ limit: 7 })).body.result.data).toMatchObject({ limit: 7, offset: 0 });
  });
});

describe('GET /api/projects while projects are being created', () => {
  it('reads a page and its total from one snapshot, so the two always agree', async () => {
    const organizationId = app.bootstrap.organizationId;
    const reader = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Reader');
    expect((await call(app.url, `/api/organizations/${organizationId}/members`, { apiKey: key, body: { userId: reader.userId, role: 'member' } })).status).toBe(201);
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing && i < 150; i += 1) await Promise.all([1, 2, 3].map((n) => createProject({ name: `Churn ${i}.${n}` })));
    })();
    const mismatches: string[] = [];
    try {
      for (let i = 0; i < 40; i += 1) {
        const page = (await call(app.url, '/api/projects?limit=200', { apiKey: reader.apiKey })).body.data;
        if (page.total <= 200 && page.projects.length !== page.total) mismatches.push(`${page.projects.length} rows, total ${page.total}`);
      }
    } finally {
      writing = false;
      await writer;
    }
    expect(mismatches).toEqual([]);
  });
});

describe('GET /api/projects/{projectId}', () => {
  it('returns the detail form', async () => {
    const project = await createProject({ name: 'Detail' });
    await sqlAsOwner(`update projects set progress = '{"discovery": 1, "featureSelection": 0.5}', discovery_started_at = now() where id = $1`, [project.id]);
    const response = await call(app.url, `/api/projects/${project.id}`, { apiKey: key });
    expect(response.body.data).toMatchObject({
      id: project.id,
      progress: { overall: 0.25, byPhase: { discovery: 1, featureSelection: 0.5, planGeneration: 0, planning: 0, visualDiscovery: 0, specification: 0 } },
      discoveryStartedAt: expect.any(String),
      discoveryCompletedAt: null,
      featureSelectionStartedAt: null,
      featureSelectionCompletedAt: null,
      planGenerationStartedAt: null,
      discoveryOutput: null,
      selectedFeatures: [],
      ontologyCoverage: 0,
    });
  });

  it('answers NOT_FOUND for an unknown id and for another tenant', async () => {
    const project = await createProject({ name: 'Mine' });
    const other = await createTenant(app);
    expect((await call(app.url, `/api/projects/${project.id}`, { apiKey: other.apiKey })).status).toBe(404);
    expect((await call(app.url, '/api/projects/00000000-0000-4000-8000-000000000000', { apiKey: key })).status).toBe(404);
  });
});

describe('PATCH /api/projects/{projectId}', () => {
  it('changes name, description, metadata and status', async () => {
    const project = await createProject({ name: 'Before' });
    const response = await call(app.url, `/api/projects/${project.id}`, { method: 'PATCH', apiKey: key, body: { name: 'After', description: null, metadata: { a: 1 }, status: 'archived' } });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ name: 'After', description: null, metadata: { a: 1 }, status: 'archived', phase: 'CREATED' });
  });

  it('changes nothing, updatedAt included, when the body names no field, and answers the project as it is', async () => {
    const project = await createProject({ name: 'Untouched', metadata: { keep: 'me' } });
    // Made long ago, so any write would show in updatedAt.
    await sqlAsOwner(`update projects set created_at = '2026-01-01', updated_at = '2026-01-01' where id = $1`, [project.id]);
    const before = (await call(app.url, `/api/projects/${project.id}`, { apiKey: key })).body.data;
    for (const body of [{}, undefined]) {
      const response = await call(app.url, `/api/projects/${project.id}`, { method: 'PATCH', apiKey: key, body });
      expect([response.status, response.body.data], JSON.stringify(body)).toEqual([200, before]);
    }
    const [row] = await sqlAsOwner('select name, metadata, updated_at = created_at as untouched from projects where id = $1', [project.id]);
    expect(row).toEqual({ name: 'Untouched', metadata: { keep: 'me' }, untouched: true });
    const other = await createTenant(app, 'Empty patcher');
    expect((await call(app.url, `/api/projects/${project.id}`, { method: 'PATCH', apiKey: other.apiKey, body: {} })).status).toBe(404);
  });

  it('refuses phase and read-only fields by name and changes nothing', async () => {
    const project = await createProject({ name: 'Frozen' });
    const readOnly = [
      { id: '00000000-0000-4000-8000-000000000000' },
      { updatedAt: '2020-01-01T00:00:00Z' },
      { organizationId: '00000000-0000-4000-8000-000000000000' },
      { template: 'other' },
      { discoveryStartedAt: '2020-01-01T00:00:00Z' },
      { planGenerationStartedAt: '2020-01-01T00:00:00Z' },
      { discoveryOutput: {} },
      { selectedFeatures: [] },
      { ontologyCoverage: 1 },
    ].map((field) => ({ name: 'X', ...field }));
    for (const body of [{ phase: 'SPECIFICATION' }, { name: 'X', createdAt: '2020-01-01T00:00:00Z' }, { status: 'completed' }, { progress: { overall: 1 } }, ...readOnly]) {
      const response = await call(app.url, `/api/projects/${project.id}`, { method: 'PATCH', apiKey: key, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('VALIDATION_ERROR');
    }
    const phase = await call(app.url, `/api/projects/${project.id}`, { method: 'PATCH', apiKey: key, body: { phase: 'SPECIFICATION' } });
    expect(phase.body.error.details.issues).toEqual([{ field: 'phase', issue: expect.any(String) }]);
    const [row] = await sqlAsOwner('select name, phase, status, updated_at = created_at as untouched from projects where id = $1', [project.id]);
    expect(row).toEqual({ name: 'Frozen', phase: 'CREATED', status: 'active', untouched: true });
  });
});

describe('DELETE /api/projects/{projectId}', () => {
  it('removes the project and what belongs to it in one transaction, reporting what went', async () => {
    const project = await createProject({ name: 'Doomed', organizationId: app.bootstrap.organizationId });
    const customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Cora');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, app.bootstrap.organizationId, customer.userId]);
    await sqlAsOwner('insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)', [app.bootstrap.tenantId, app.bootstrap.organizationId, project.id, customer.userId]);
    // A uuid names the same project in any letter case; the answer names it as every other answer does.
    const response = await call(app.url, `/api/projects/${project.id.toUpperCase()}`, { method: 'DELETE', apiKey: key });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ projectId: project.id, deletedTables: ['agency_project_assignments', 'projects'], rowsDeleted: 2 });
    expect(await sqlAsOwner('select id from projects where id = $1', [project.id])).toEqual([]);
    expect(await sqlAsOwner('select id from agency_project_assignments where project_id = $1', [project.id])).toEqual([]);
    expect((await call(app.url, `/api/projects/${project.id}`, { method: 'DELETE', apiKey: key })).status).toBe(404);
  });

  it("also removes the project's kit executions, their outputs and bundles, and its credentials, and reports them", async () => {
    const tenantId = app.bootstrap.tenantId;
    const organizationId = app.bootstrap.organizationId;
    const [kit] = await sqlAsOwner('select id, latest_version_id from kits where organization_id is null and latest_version_id is not null order by kit_id limit 1');
    const withKitRows = async (projectId: string) => {
      const [blob] = await sqlAsOwner(
        `insert into blobs (tenant_id, content_type, size_bytes, sha256, content) values ($1, 'application/zip', 3, 'abc', '\\x010203') returning id`,
        [tenantId],
      );
      const [execution] = await sqlAsOwner(
        `insert into kit_executions (tenant_id, organization_id, project_id, kit_row_id, kit_version_id, status, input, bundle_blob_id)
         values ($1, $2, $3, $4, $5, 'completed', '{}', $6) returning id`,
        [tenantId, organizationId, projectId, kit.id, kit.latest_version_id, blob.id],
      );
      for (const outputId of ['readme', 'schema']) {
        await sqlAsOwner(
          `insert into kit_outputs (tenant_id, execution_id, output_id, filename, output_type, content_type, content, status, content_size_bytes)
           values ($1, $2, $3, $3, 'markdown', 'text/markdown', 'x', 'valid', 1)`,
          [tenantId, execution.id, outputId],
        );
      }
      await sqlAsOwner(
        `insert into kit_credentials (tenant_id, organization_id, project_id, kit_id, credential_type, key_id, sealed) values ($1, $2, $3, 'git-publish', 'api_key', 'k1', 'sealed')`,
        [tenantId, organizationId, projectId],
      );
      return { blobId: blob.id as string, executionId: execution.id as string };
    };
    const doomed = await createProject({ name: 'Generated', organizationId });
    const kept = await createProject({ name: 'Neighbour', organizationId });
    const doomedRows = await withKitRows(doomed.id);
    const keptRows = await withKitRows(kept.id);

    const response = await call(app.url, `/api/projects/${doomed.id}`, { method: 'DELETE', apiKey: key });
    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toEqual({
      projectId: doomed.id,
      deletedTables: ['kit_outputs', 'kit_executions', 'blobs', 'kit_credentials', 'projects'],
      rowsDeleted: 6,
    });
    // The bundle is gone too: a download link handed out before cannot serve the project's files.
    expect(await sqlAsOwner('select id from blobs where id = $1', [doomedRows.blobId])).toEqual([]);
    expect(await sqlAsOwner('select id from kit_executions where id = $1', [doomedRows.executionId])).toEqual([]);
    expect(await sqlAsOwner('select id from kit_credentials where project_id = $1', [doomed.id])).toEqual([]);
    // The neighbour keeps everything.
    expect(await sqlAsOwner('select id from blobs where id = $1', [keptRows.blobId])).toHaveLength(1);
    expect(await sqlAsOwner('select id from kit_outputs where execution_id = $1', [keptRows.executionId])).toHaveLength(2);
    expect(await sqlAsOwner('select id from kit_credentials where project_id = $1', [kept.id])).toHaveLength(1);

    // One transaction: when the last step (the project row) fails, every earlier delete is undone.
    const stubborn = await withKitRows(kept.id).then(() => kept);
    const counts = async () =>
      (await sqlAsOwner(
        `select (select count(*) from kit_outputs o join kit_executions e on e.id = o.execution_id where e.project_id = $1)::int as outputs,
                (select count(*) from kit_executions where project_id = $1)::int as executions,
                (select count(*) from kit_credentials where project_id = $1)::int as credentials,
                (select count(*) from projects where id = $1)::int as projects`,
        [stubborn.id],
      ))[0];
    const before = await counts();
    await sqlAsOwner(`create function refuse_project_delete() returns trigger language plpgsql as $$ begin raise exception 'refused for the test'; end $$`);
    await sqlAsOwner(`create trigger refuse_project_delete before delete on projects for each row when (old.id = '${stubborn.id}') execute function refuse_project_delete()`);
    try {
      const refused = await call(app.url, `/api/projects/${stubborn.id}`, { method: 'DELETE', apiKey: key });
      expect(refused.status).toBe(500);
    } finally {
      await sqlAsOwner('drop trigger refuse_project_delete on projects; drop function refuse_project_delete()');
    }
    expect(await counts()).toEqual(before);
    expect(before).toEqual({ outputs: 4, executions: 2, credentials: 2, projects: 1 });
  });

  it('counts outputs a worker was storing at that moment: it waits for the store, and leaves none to the cascade', async () => {
    const tenantId = app.bootstrap.tenantId;
    const organizationId = app.bootstrap.organizationId;
    const [kit] = await sqlAsOwner('select id, latest_version_id from kits where organization_id is null and latest_version_id is not null order by kit_id limit 1');
    const project = await createProject({ name: 'Busy', organizationId });
    const [execution] = await sqlAsOwner(
      `insert into kit_executions (tenant_id, organization_id, project_id, kit_row_id, kit_version_id, status, input) values ($1, $2, $3, $4, $5, 'running', '{}') returning id`,
      [tenantId, organizationId, project.id, kit.id, kit.latest_version_id],
    );
    // The worker's store, caught in the middle: its outputs are inserted, not yet committed.
    const response = await whileTransactionHolds(
      app.database.ownerUrl,
      (worker) =>
        worker.query(
          `insert into kit_outputs (tenant_id, execution_id, output_id, filename, output_type, content_type, content, status, content_size_bytes)
           values ($1, $2, 'readme', 'README.md', 'markdown', 'text/markdown', 'x', 'valid', 1), ($1, $2, 'notes', 'NOTES.md', 'markdown', 'text/markdown', 'y', 'valid', 1)`,
          [tenantId, execution.id],
        ),
      () => call(app.url, `/api/projects/${project.id}`, { method: 'DELETE', apiKey: key }),
    );
    expect(response.status, response.text).toBe(200);
    expect(response.body.data).toEqual({ projectId: project.id, deletedTables: ['kit_outputs', 'kit_executions', 'projects'], rowsDeleted: 4 });
    expect(await sqlAsOwner('select id from kit_outputs where execution_id = $1', [execution.id])).toEqual([]);
  });
});

describe('customers', () => {
  let customer: Actor;
  let assignedId: string;
  let otherId: string;

  beforeAll(async () => {
    customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Client');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, app.bootstrap.organizationId, customer.userId]);
    assignedId = (await createProject({ name: 'Theirs', organizationId: app.bootstrap.organizationId })).id;
    otherId = (await createProject({ name: 'Not theirs', organizationId: app.bootstrap.organizationId })).id;
    await sqlAsOwner('insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)', [app.bootstrap.tenantId, app.bootstrap.organizationId, assignedId, customer.userId]);
  });

  it('see and touch only the projects assigned to them; everything else is NOT_FOUND', async () => {
    const listed = await call(app.url, '/api/projects', { apiKey: customer.apiKey });
    expect(listed.body.data.projects.map((p: { id: string }) => p.id)).toEqual([assignedId]);
    expect(listed.body.data.total).toBe(1);
    expect((await call(app.url, `/api/projects/${assignedId}`, { apiKey: customer.apiKey })).status).toBe(200);
    expect((await call(app.url, `/api/projects/${assignedId}`, { method: 'PATCH', apiKey: customer.apiKey, body: { description: 'notes' } })).status).toBe(200);
    expect((await call(app.url, `/api/projects/${otherId}`, { apiKey: customer.apiKey })).status).toBe(404);
    expect((await call(app.url, `/api/projects/${otherId}`, { method: 'PATCH', apiKey: customer.apiKey, body: { name: 'x' } })).status).toBe(404);
    expect((await call(app.url, '/api/projects', { apiKey: customer.apiKey, body: { name: 'new' } })).status).toBe(400);
    expect((await call(app.url, '/api/projects', { apiKey: customer.apiKey, body: { name: 'new', organizationId: app.bootstrap.organizationId } })).status).toBe(403);
    expect((await call(app.url, `/api/projects/${assignedId}`, { method: 'DELETE', apiKey: customer.apiKey })).status).toBe(403);
    expect((await call(app.url, `/api/projects/${otherId}`, { method: 'DELETE', apiKey: customer.apiKey })).status).toBe(404);
    expect(await sqlAsOwner('select id from projects where id = $1', [otherId])).toHaveLength(1);
    expect((await sqlAsOwner('select name from projects where id = $1', [otherId]))[0].name).toBe('Not theirs');
  });

  it('lose the project at once when the assignment goes', async () => {
    await sqlAsOwner('delete from agency_project_assignments where customer_user_id = $1', [customer.userId]);
    expect((await call(app.url, `/api/projects/${assignedId}`, { apiKey: customer.apiKey })).status).toBe(404);
  });
});
