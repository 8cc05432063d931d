import { unzipSync, strFromU8 } from 'fflate';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDownloadLinks } from '../../control-plane/http/download-links.ts';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForBundle, waitForExecution } from '../helpers/kit-fixtures.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';

let app: TestApp;
let key: string;
let orgId: string;
let projectId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit() })).status).toBe(201);
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Rockets' } })).body.data.id;
});
afterAll(() => app?.stop());

const execute = (kitId: string, body: unknown) => call(app.url, `/api/${orgId}/kits/${kitId}/execute`, { apiKey: key, body });
const untilNoJobsOf = async (task: string) => {
  const deadline = Date.now() + 10_000;
  while ((await countRows(app.database.ownerUrl, `graphile_worker.jobs where task_identifier = '${task}'`)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
};

describe('executing a kit', () => {
  let executionId: string;

  it('answers 201 with a pending execution whose row and job were written together', async () => {
    const response = await execute('service-starter', sampleExecutionBody(projectId));
    expect(response.status, response.text).toBe(201);
    expect(response.body.data).toEqual({ executionId: expect.any(String), status: 'pending', workerRunId: expect.stringMatching(/^\d+$/), createdAt: expect.any(String) });
    executionId = response.body.data.executionId;
    const [row] = await sqlAsOwner('select worker_run_id from kit_executions where id = $1', [executionId]);
    expect(row.worker_run_id).toBe(response.body.data.workerRunId);
  });

  it('runs in the worker to completed, with every field of the execution', async () => {
    const done = await waitForExecution(app.url, key, orgId, executionId);
    expect(done).toMatchObject({
      id: executionId,
      kitId: 'service-starter',
      kitVersion: '1.0.0',
      projectId,
      status: 'completed',
      startedAt: expect.any(String),
      completedAt: expect.any(String),
      executionTimeMs: expect.any(Number),
      outputCount: 3,
      outputsValid: 3,
      outputsWarnings: 0,
      outputsFailed: 0,
      tokenUsageTotal: 0,
      estimatedCostUsd: '0.000000',
      errorMessage: null,
      tokenUsage: { prompt: 0, completion: 0, total: 0 },
      options: { dryRun: false, skipApply: false },
    });
    expect(done.outputs.map((o: { outputId: string; status: string }) => `${o.outputId}:${o.status}`).sort()).toEqual(['compose:valid', 'openapi:valid', 'readme:valid']);
    expect(done.phases.map((p: { phase: string }) => p.phase)).toContain('VERIFY');
    // The example kit's SPEC hook logs one line.
    expect(done.logs).toEqual([{ phase: 'SPEC', level: 'info', message: 'building spec for Acme Rockets' }]);
    const listed = await call(app.url, `/api/${orgId}/kits/executions?projectId=${projectId}&status=completed`, { apiKey: key });
    expect(listed.body.data.executions.map((e: { id: string }) => e.id)).toContain(executionId);
  });

  it('serves each output and a bundle whose ZIP holds the outputs and a checksum manifest', async () => {
    const output = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/outputs/readme`, { apiKey: key });
    expect(output.body.data).toMatchObject({ outputId: 'readme', filename: 'README.md', status: 'valid', contentType: expect.stringContaining('markdown') });
    expect(output.body.data.content).toContain('# Acme Rockets');

    const bundled = await waitForBundle(app.url, key, orgId, executionId);
    expect(bundled).toMatchObject({ bundleStatus: 'ready', bundlePath: `executions/${executionId}/bundle.zip`, bundleSizeBytes: expect.any(Number) });
    const link = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: key });
    expect(link.status).toBe(200);
    expect(link.body.data).toMatchObject({ downloadUrl: expect.stringMatching(/^\/api\/downloads\//), expiresAt: expect.any(String), sizeBytes: expect.any(Number) });
    const download = await fetch(`${app.url}${link.body.data.downloadUrl}`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/zip');
    const zip = new Uint8Array(await download.arrayBuffer());
    expect(zip.length).toBe(link.body.data.sizeBytes);
    const entries = unzipSync(zip);
    expect(Object.keys(entries).sort()).toEqual([...link.body.data.contents].sort());
    expect(Object.keys(entries).every((name) => !name.startsWith('/') && !name.split('/').includes('..'))).toBe(true);
    const manifest = JSON.parse(strFromU8(entries['manifest.json']!));
    expect([manifest.executionId, manifest.createdAt]).toEqual([executionId, bundled.completedAt]);
    expect(manifest.files.map((file: { name: string }) => file.name).sort()).toEqual(Object.keys(entries).filter((name) => name !== 'manifest.json').sort());
    for (const file of manifest.files as Array<{ name: string; sha256: string }>) {
      expect(createHash('sha256').update(entries[file.name]!).digest('hex')).toBe(file.sha256);
    }
  });

  it('serves an output by its manifest id also when that id looks like a uuid', async () => {
    const uuidLike = '0b6e6df4-d1bd-4dc6-abcc-812383054efe';
    const kit = sampleKit({ id: 'uuid-outputs' });
    kit.manifest.outputs[0].id = uuidLike;
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
    const started = await execute('uuid-outputs', sampleExecutionBody(projectId));
    expect(started.status, started.text).toBe(201);
    await waitForExecution(app.url, key, orgId, started.body.data.executionId);
    const output = await call(app.url, `/api/${orgId}/kits/executions/${started.body.data.executionId}/outputs/${uuidLike}`, { apiKey: key });
    expect([output.status, output.body.data?.outputId]).toEqual([200, uuidLike]);
    const byRowId = await call(app.url, `/api/${orgId}/kits/executions/${started.body.data.executionId}/outputs/${output.body.data.id}`, { apiKey: key });
    expect([byRowId.status, byRowId.body.data?.outputId]).toEqual([200, uuidLike]);
  });

  it('refuses tampered and expired download links', async () => {
    const link = (await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: key })).body.data.downloadUrl as string;
    const tampered = await call(app.url, `${link.slice(0, -3)}abc`);
    expect(tampered.status).toBe(403);
    expect(tampered.body.error.code).toBe('FORBIDDEN');
    const [blob] = await sqlAsOwner('select bundle_blob_id from kit_executions where id = $1', [executionId]);
    const expired = createDownloadLinks(TEST_SERVER_SECRET).create(
      { tenantId: app.bootstrap.tenantId, holder: { userId: app.bootstrap.userId }, organizationId: orgId, executionId, blobId: blob.bundle_blob_id, filename: 'x.zip' },
      -5,
    );
    const response = await call(app.url, expired.path);
    expect(response.status).toBe(403);
    expect(response.body.error.message).toMatch(/expired/);
  });

  it('does not run twice when its job is added again', async () => {
    const before = await sqlAsOwner('select id from kit_outputs where execution_id = $1 order by id', [executionId]);
    await sqlAsOwner(`select graphile_worker.add_job('kits.execute', json_build_object('executionId', $1::text, 'tenantId', $2::text))`, [executionId, app.bootstrap.tenantId]);
    await untilNoJobsOf('kits.execute');
    expect(await sqlAsOwner('select id from kit_outputs where execution_id = $1 order by id', [executionId])).toEqual(before);
    expect((await waitForExecution(app.url, key, orgId, executionId)).status).toBe('completed');
  });

  it("builds its bundle in a job of 8 attempts (about half an hour), not graphile-worker's 25 (days of \"building\")", async () => {
    // While no blob can be written the bundle job waits, holding its row where it can be read.
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    let started: { executionId: string } | undefined;
    try {
      await holder.query('begin');
      await holder.query('lock table blobs in share mode');
      started = (await execute('service-starter', sampleExecutionBody(projectId))).body.data;
      const deadline = Date.now() + 20_000;
      let job: { max_attempts: number } | undefined;
      while (!job && Date.now() < deadline) {
        [job] = await sqlAsOwner('select max_attempts from graphile_worker.jobs where key = $1', [`kit-bundle:${started!.executionId}`]);
        if (!job) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(job).toEqual({ max_attempts: 8 });
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    expect((await waitForBundle(app.url, key, orgId, started!.executionId)).bundleStatus).toBe('ready');
  });

  it('still runs a deprecated kit: deprecation tells callers to move on, it breaks nothing built on it', async () => {
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'on-its-way-out' }) })).status).toBe(201);
    const deprecated = await call(app.url, `/api/${orgId}/kits/on-its-way-out`, { method: 'PATCH', apiKey: key, body: { status: 'deprecated' } });
    expect(deprecated.body.data.status).toBe('deprecated');
    const started = await execute('on-its-way-out', sampleExecutionBody(projectId));
    expect(started.status, started.text).toBe(201);
    expect((await waitForExecution(app.url, key, orgId, started.body.data.executionId)).status).toBe('completed');
  });
});

describe('execution outcomes', () => {
  it('keeps the first 200 log lines and says how many more there were', async () => {
    const kit = sampleKit({ id: 'chatty', applyHook: "function apply(c, kit) { for (var i = 0; i < 250; i++) kit.log('debug', 'line ' + i); return null; }" });
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
    const started = await execute('chatty', sampleExecutionBody(projectId));
    const done = await waitForExecution(app.url, key, orgId, started.body.data.executionId);
    const applyLogs = done.logs.filter((entry: { phase: string }) => entry.phase === 'APPLY');
    expect(done.logs).toHaveLength(201);
    expect(applyLogs.at(0)).toEqual({ phase: 'APPLY', level: 'debug', message: 'line 0' });
    expect(done.logs.at(-1)).toEqual({ phase: 'APPLY', level: 'warn', message: '51 more log lines were not kept' });
  });

  it('is partial when some outputs are invalid, with their validation errors', async () => {
    const kit = sampleKit({ id: 'half-broken' });
    kit.files['templates/compose.yml.hbs'] = 'services: not-a-map\n';
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
    const started = await execute('half-broken', sampleExecutionBody(projectId));
    const done = await waitForExecution(app.url, key, orgId, started.body.data.executionId);
    expect(done).toMatchObject({ status: 'partial', outputsValid: 2, outputsFailed: 1 });
    const compose = done.outputs.find((o: { outputId: string }) => o.outputId === 'compose');
    expect(compose.status).toBe('invalid');
    expect(compose.validationErrors.join(' ')).toMatch(/services/);
    await waitForBundle(app.url, key, orgId, started.body.data.executionId);
    const link = await call(app.url, `/api/${orgId}/kits/executions/${started.body.data.executionId}/bundle`, { apiKey: key });
    expect(link.body.data.contents).not.toContain('deploy/docker-compose.yml');
  });

  it('reads "building" from the moment a failed run with valid outputs ends until its bundle is ready, then serves it', async () => {
    const kit = sampleKit({ id: 'apply-refused', applyHook: 'function apply() { throw new Error("the remote refused the push"); }' });
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
    await untilNoJobsOf('kits.bundle_execution');
    // Holding off every blob write keeps the bundle job between "enqueued" and "attached".
    const blocker = new pg.Client({ connectionString: app.database.ownerUrl });
    await blocker.connect();
    let executionId = '';
    try {
      await blocker.query('begin');
      await blocker.query('lock table blobs in share mode');
      const started = await execute('apply-refused', sampleExecutionBody(projectId));
      executionId = started.body.data.executionId;
      const done = await waitForExecution(app.url, key, orgId, executionId);
      expect(done).toMatchObject({ status: 'failed', outputsValid: 3, bundleStatus: 'building' });
      expect(done.errorMessage).toContain('APPLY');
      const early = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: key });
      expect(early.status).toBe(409);
      expect(early.body.error.message).toMatch(/being built/);
      expect(early.body.error.details).toEqual({ status: 'failed', bundleStatus: 'building' });
    } finally {
      await blocker.query('rollback');
      await blocker.end();
    }
    expect((await waitForBundle(app.url, key, orgId, executionId)).bundleStatus).toBe('ready');
    const link = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: key });
    expect(link.status).toBe(200);
    expect([...link.body.data.contents].sort()).toEqual(['README.md', 'deploy/docker-compose.yml', 'manifest.json', 'openapi.json']);
  });

  it('fails with the list of missing inputs when CHECK finds them absent', async () => {
    // The example kit's SPEC hook reads the entities before CHECK runs; without it, CHECK speaks first.
    const kit = sampleKit({ id: 'checked-kit' });
    delete kit.manifest.hooks.SPEC;
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
    const started = await execute('checked-kit', { ...sampleExecutionBody(projectId), discoveryAnswers: {} });
    const done = await waitForExecution(app.url, key, orgId, started.body.data.executionId);
    expect(done.status).toBe('failed');
    expect(done.errorMessage).toContain('discoveryAnswers.entities');
    expect(done.bundleStatus).toBe('none');
    const link = await call(app.url, `/api/${orgId}/kits/executions/${started.body.data.executionId}/bundle`, { apiKey: key });
    expect(link.status).toBe(409);
  });

  it('stores outputs and messages carrying NUL characters instead of leaving the execution running', async () => {
    // PostgreSQL text and jsonb hold no U+0000: a kit that renders one, names one in a JSON key its
    // schema refuses, or returns one in an unknown hook-result key must still end its execution.
    const renders = sampleKit({ id: 'renders-nul' });
    renders.manifest.hooks.PLAN = 'hooks/plan.js';
    renders.files['hooks/plan.js'] = 'function plan() { return { data: "a" + String.fromCharCode(0) + "b" }; }';
    renders.files['templates/readme.md.hbs'] += '{{@plan}}\n';
    renders.files['schemas/openapi.schema.json'] = JSON.stringify({ type: 'object', additionalProperties: false, properties: { openapi: {}, info: {}, paths: {} } });
    renders.files['templates/openapi.json.hbs'] = '{"openapi": "3.1.0", "info": {}, "paths": {}, "x\\u0000y": 1, "z\\ud800": 2}\n';
    const answers = sampleKit({ id: 'answers-nul' });
    answers.manifest.hooks.CHECK = 'hooks/check.js';
    answers.files['hooks/check.js'] = 'function check() { var result = {}; result["bad" + String.fromCharCode(0)] = 1; return result; }';
    for (const kit of [renders, answers]) expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);

    const rendered = await waitForExecution(app.url, key, orgId, (await execute('renders-nul', sampleExecutionBody(projectId))).body.data.executionId, 10_000);
    expect(rendered).toMatchObject({ status: 'partial', outputsValid: 1, outputsFailed: 2 });
    const readme = await call(app.url, `/api/${orgId}/kits/executions/${rendered.id}/outputs/readme`, { apiKey: key });
    expect(readme.body.data).toMatchObject({ status: 'invalid', validationErrors: ['output contains NUL characters'] });
    expect(readme.body.data.content).toContain('a\uFFFDb');
    expect(readme.body.data.contentSizeBytes).toBe(Buffer.byteLength(readme.body.data.content, 'utf8'));
    const openapi = rendered.outputs.find((o: { outputId: string }) => o.outputId === 'openapi');
    expect(openapi.validationErrors.join(' ')).toMatch(/additional properties "x\uFFFDy".*"z\uFFFD"/);

    const answered = await waitForExecution(app.url, key, orgId, (await execute('answers-nul', sampleExecutionBody(projectId))).body.data.executionId, 10_000);
    expect(answered.status).toBe('failed');
    expect(answered.errorMessage).toContain('Unrecognized key: "bad\uFFFD"');
  });
});

describe('the latest version', () => {
  it('is the highest by semver, not the last published, for execute without a version and for a composite\'s unpinned component', async () => {
    for (const version of ['2.0.0', '1.0.1']) expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'two-lines', version }) })).status).toBe(201);
    const direct = await waitForExecution(app.url, key, orgId, (await execute('two-lines', sampleExecutionBody(projectId))).body.data.executionId);
    expect(direct).toMatchObject({ kitVersion: '2.0.0', status: 'completed' });

    const composite = sampleKit({ id: 'two-lines-bundle' });
    Object.assign(composite.manifest, {
      phases: ['PLAN'],
      outputs: [{ id: 'index', filename: 'INDEX.md', template: 'templates/index.md.hbs', outputType: 'markdown' }],
      components: [{ kitId: 'two-lines', prefix: 'svc' }],
      hooks: {},
      partials: {},
      discovery: { pools: [] },
      inputs: { required: [] },
    });
    composite.manifest.metadata.kitType = 'composite';
    composite.files = { 'templates/index.md.hbs': '# Index\n' };
    const published = await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: composite });
    expect(published.status, published.text).toBe(201);
    const bundled = await waitForExecution(app.url, key, orgId, (await execute('two-lines-bundle', sampleExecutionBody(projectId))).body.data.executionId);
    expect(bundled.status, bundled.errorMessage).toBe('completed');
    const openapi = await call(app.url, `/api/${orgId}/kits/executions/${bundled.id}/outputs/svc.openapi`, { apiKey: key });
    expect(JSON.parse(openapi.body.data.content).info.version).toBe('2.0.0');
  });
});

describe('a version stored before today\'s publish checks', () => {
  it('still runs as it did: its clashing fixed names make the run partial, not "no longer loads"', async () => {
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'older-rules' }) })).status).toBe(201);
    // Two fixed names that clash by letter case, as a publish before the check could store them.
    await sqlAsOwner(`
      alter table kit_versions disable trigger kit_versions_immutable;
      update kit_versions set manifest = jsonb_set(manifest, '{outputs,1,filename}', to_jsonb(upper(manifest #>> '{outputs,0,filename}')))
        where kit_row_id = (select id from kits where kit_id = 'older-rules');
      alter table kit_versions enable trigger kit_versions_immutable;`);
    const ended = await waitForExecution(app.url, key, orgId, (await execute('older-rules', sampleExecutionBody(projectId))).body.data.executionId);
    expect([ended.status, ended.errorMessage]).toEqual(['partial', expect.any(String)]);
    expect(ended.errorMessage).not.toMatch(/no longer loads/);
  });
});

describe('a pinned version', () => {
  it('may be as long as a manifest allows (128 characters)', async () => {
    const version = `1.0.0-${'a'.repeat(122)}`;
    expect(version).toHaveLength(128);
    const published = await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit({ id: 'long-pinned', version }) });
    expect(published.status, published.text).toBe(201);
    const started = await execute('long-pinned', { ...sampleExecutionBody(projectId), version });
    expect(started.status, started.text).toBe(201);
    expect((await waitForExecution(app.url, key, orgId, started.body.data.executionId)).kitVersion).toBe(version);
  });
});

describe('bad input', () => {
  it('is refused clearly and leaves no rows or jobs', async () => {
    const executions = await countRows(app.database.ownerUrl, 'kit_executions');
    const jobs = await countRows(app.database.ownerUrl, 'graphile_worker.jobs');
    const unknownProject = await execute('service-starter', sampleExecutionBody('00000000-0000-4000-8000-000000000000'));
    expect(unknownProject.status).toBe(404);
    expect(unknownProject.body.error.details).toEqual({ field: 'projectId' });
    expect((await execute('no-such-kit', sampleExecutionBody(projectId))).status).toBe(404);
    const invalid = await execute('service-starter', { projectId, businessProfile: { company: {} } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(expect.arrayContaining(['businessProfile.company.name', 'businessProfile.company.industry']));
    expect((await execute('service-starter', { ...sampleExecutionBody(projectId), version: '9.9.9' })).status).toBe(404);
    // A version is named as its manifest gives it: an empty one is not "the latest".
    for (const version of ['', 'latest', '1.0']) {
      const refused = await execute('service-starter', { ...sampleExecutionBody(projectId), version });
      expect([refused.status, refused.body.error.details?.issues?.[0]?.field], version).toEqual([400, 'version']);
    }
    // Options belong under `options`: one misplaced at the top would otherwise be dropped, and APPLY run for real.
    const misplaced = await execute('service-starter', { ...sampleExecutionBody(projectId), dryRun: true });
    expect([misplaced.status, misplaced.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(misplaced.body.error.details.issues).toEqual([{ field: 'dryRun', issue: 'is not a field that can be set here' }]);
    expect(await countRows(app.database.ownerUrl, 'kit_executions')).toBe(executions);
    expect(await countRows(app.database.ownerUrl, 'graphile_worker.jobs')).toBe(jobs);
    expect((await call(app.url, `/api/${orgId}/kits/executions/00000000-0000-4000-8000-000000000000`, { apiKey: key })).status).toBe(404);
  });

  it('refuses NUL characters and unpaired surrogates by field, not with a 500, and leaves no rows or jobs', async () => {
    const executions = await countRows(app.database.ownerUrl, 'kit_executions');
    const jobs = await countRows(app.database.ownerUrl, 'graphile_worker.jobs');
    const body = sampleExecutionBody(projectId);
    const nul = await execute('service-starter', { ...body, discoveryAnswers: { entities: ['Rocket\u0000'] } });
    expect(nul.status, nul.text).toBe(400);
    expect(nul.body.error.code).toBe('VALIDATION_ERROR');
    expect(nul.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(['discoveryAnswers.entities.0']);
    const surrogate = await execute('service-starter', { ...body, businessProfile: { company: { name: 'Acme \ud800', industry: 'aerospace' } } });
    expect(surrogate.status, surrogate.text).toBe(400);
    expect(surrogate.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(['businessProfile.company.name']);
    expect((await execute('service-starter', { ...body, version: '1.0.0\u0000' })).status).toBe(400);
    expect(await countRows(app.database.ownerUrl, 'kit_executions')).toBe(executions);
    expect(await countRows(app.database.ownerUrl, 'graphile_worker.jobs')).toBe(jobs);
    const listed = await call(app.url, `/api/${orgId}/kits/executions?kitId=%00`, { apiKey: key });
    expect(listed.status, listed.text).toBe(400);
    expect(listed.body.error.details.issues.map((i: { field: string }) => i.field)).toEqual(['kitId']);
  });
});
