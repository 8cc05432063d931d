import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForBundle, waitForExecution } from '../helpers/kit-fixtures.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Executions and bundles always end: whatever a kit names its outputs, and whatever the database
 * refuses, an execution leaves "running" and a bundle leaves "building" within moments — never
 * through the job's 25 retries — with a message that says why, and never with duplicated outputs.
 */
let app: TestApp;
let key: string;
let orgId: string;
let projectId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const publish = async (kit: unknown) => {
  const response = await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit });
  expect(response.status, response.text).toBe(201);
};
const execute = async (kitId: string, discoveryAnswers: Record<string, unknown>) => {
  const response = await call(app.url, `/api/${orgId}/kits/${kitId}/execute`, { apiKey: key, body: { ...sampleExecutionBody(projectId), discoveryAnswers } });
  expect(response.status, response.text).toBe(201);
  return response.body.data.executionId as string;
};
const bundleOf = async (executionId: string) => {
  const link = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: key });
  expect(link.status, link.text).toBe(200);
  const zip = unzipSync(new Uint8Array(await (await fetch(`${app.url}${link.body.data.downloadUrl}`)).arrayBuffer()));
  return { contents: [...link.body.data.contents].sort(), entries: Object.keys(zip).sort(), zip };
};
const outputsOf = (execution: { outputs: Array<{ outputId: string; filename: string; status: string; validationErrors: string[] }> }) =>
  execution.outputs.map((o) => [o.outputId, o.filename, o.status, o.validationErrors]);

const fileKit = (id: string, kitType: string, extra: Record<string, unknown>, files: Record<string, string>) => ({
  manifest: {
    metadata: { id, displayName: id, version: '1.0.0', description: 'test', author: 'test', kitType },
    platform: { name: 'none', category: 'test' },
    phases: ['PLAN'],
    discovery: { pools: [] },
    ...extra,
  },
  files,
});

/** Two outputs named by its PLAN hook (a pair chosen by `discoveryAnswers.names`) and one named plainly. */
const namesKit = fileKit(
  'names-from-plan',
  'file',
  {
    outputs: [
      { id: 'first', filename: '{{@plan.a}}', template: 't/out.hbs', outputType: 'text' },
      { id: 'second', filename: '{{@plan.b}}', template: 't/out.hbs', outputType: 'text' },
      { id: 'third', filename: 'third.md', template: 't/out.hbs', outputType: 'text' },
    ],
    hooks: { PLAN: 'h/plan.js' },
  },
  {
    't/out.hbs': 'hello\n',
    'h/plan.js': `function plan(context) {
  var pairs = {
    surrogates: ['x' + String.fromCharCode(0xD800) + '.md', 'x' + String.fromCharCode(0xDC00) + '.md'],
    nested: ['docs', 'docs/x.md'],
    letterCase: ['A.md', 'a.md'],
    manifest: ['notes.md', 'MANIFEST.JSON'],
    forbidden: ['forbidden.md', 'allowed.md'],
  };
  var pair = pairs[context.input.discoveryAnswers.names];
  return { data: { a: pair[0], b: pair[1] } };
}`,
  },
);

beforeAll(async () => {
  // Polling a run that never ends would otherwise spend the general budget and hide the real failure.
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_GENERAL_PER_MINUTE: '10000' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Final states' } })).body.data.id;
  await publish(namesKit);
  await publish(sampleKit());
});
afterAll(() => app?.stop());

describe('a composite whose output ids collide after forEach expansion', () => {
  it('ends partial with the later output invalid under an unused id, and bundles the rest', async () => {
    await publish(fileKit('zero-x', 'file', { outputs: [{ id: '0', filename: 'zero.md', template: 't/zero.hbs', outputType: 'markdown' }] }, { 't/zero.hbs': '# zero\n' }));
    await publish(
      fileKit(
        'cmp-x',
        'composite',
        {
          outputs: [{ id: 'a', filename: 'own-{{@output.index}}.md', template: 't/own.hbs', outputType: 'markdown', forEach: 'discoveryAnswers.list' }],
          components: [{ kitId: 'zero-x', version: '1.0.0', prefix: 'a' }],
        },
        { 't/own.hbs': '# own {{@output.item}}\n' },
      ),
    );
    const executionId = await execute('cmp-x', { list: [1, 2] });
    const done = await waitForExecution(app.url, key, orgId, executionId, 10_000);
    expect(done).toMatchObject({ status: 'partial', outputsValid: 2, outputsFailed: 1, errorMessage: 'some outputs are invalid: a.0~2' });
    expect(outputsOf(done)).toEqual([
      ['a.0', 'own-0.md', 'valid', []],
      ['a.0~2', 'a/zero.md', 'invalid', ['output id "a.0" is already used by another output of this run, so this one is kept as "a.0~2"']],
      ['a.1', 'own-1.md', 'valid', []],
    ]);
    expect((await waitForBundle(app.url, key, orgId, executionId, 10_000)).bundleStatus).toBe('ready');
    expect((await bundleOf(executionId)).entries).toEqual(['manifest.json', 'own-0.md', 'own-1.md']);
  });
});

describe('an outcome the database refuses for good', () => {
  it('ends the execution failed with a message at once, instead of leaving it running through the retries', async () => {
    // A rule the database enforces and the runtime does not know: the insert fails the same way every time.
    await sqlAsOwner(`alter table kit_outputs add constraint test_refuses_forbidden_md check (filename <> 'forbidden.md')`);
    try {
      const executionId = await execute('names-from-plan', { names: 'forbidden' });
      const done = await waitForExecution(app.url, key, orgId, executionId, 10_000);
      expect(done).toMatchObject({
        status: 'failed',
        errorMessage:
          'This execution could not be recorded: the database refused its outcome: a rule it enforces (SQLSTATE 23514, constraint test_refuses_forbidden_md). No outputs were kept; start a new execution.',
        outputs: [],
        outputCount: 0,
        bundleStatus: 'none',
      });
      expect(done.phases.map((p: { phase: string }) => p.phase)).toEqual(['PLAN', 'RENDER', 'VALIDATE']);
      // Its job ended too: nothing is left to retry.
      expect(await countRows(app.database.ownerUrl, `graphile_worker.jobs where task_identifier = 'kits.execute'`)).toBe(0);
    } finally {
      await sqlAsOwner('alter table kit_outputs drop constraint test_refuses_forbidden_md');
    }
  });
});

describe('a bundle the database refuses for good', () => {
  it('reads failed with the reason, at once, instead of building through every retry', async () => {
    // A rule the database enforces on stored bundles: the blob insert fails the same way every time.
    await sqlAsOwner(`alter table blobs add constraint test_refuses_bundles check (content_type <> 'application/zip') not valid`);
    try {
      const executionId = await execute('names-from-plan', { names: 'forbidden' });
      const done = await waitForBundle(app.url, key, orgId, executionId, 10_000);
      expect(done).toMatchObject({ status: 'completed', bundleStatus: 'failed' });
      const bundle = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: key });
      expect(bundle.status).toBe(409);
      expect(bundle.body.error).toMatchObject({
        code: 'CONFLICT',
        message: 'The bundle of this execution could not be built: the database refused it: a rule it enforces (SQLSTATE 23514, constraint test_refuses_bundles). Start a new execution.',
        details: { bundleStatus: 'failed' },
      });
      expect(await countRows(app.database.ownerUrl, `graphile_worker.jobs where task_identifier = 'kits.bundle_execution'`)).toBe(0);
    } finally {
      await sqlAsOwner('alter table blobs drop constraint test_refuses_bundles');
    }
  });
});

describe('whether a failed attempt to record an execution is retried', () => {
  const attempt = (attempts: number) => ({ attempts, max_attempts: 25 });
  // Loaded after the service: the job module and the job list import each other.
  let whyNotToRetry: typeof import('../../control-plane/domains/kit-executions/kit-execution.job.ts').whyNotToRetry;
  beforeAll(async () => {
    ({ whyNotToRetry } = await import('../../control-plane/domains/kit-executions/kit-execution.job.ts'));
  });
  it('is not, for what the database refuses the same way every time', () => {
    expect(whyNotToRetry({ code: '23505', constraint: 'kit_outputs_execution_output_key' }, attempt(1))).toBe('two outputs have the same id');
    expect(whyNotToRetry({ code: '22001' }, attempt(1))).toBe('the database refused its outcome: a value it cannot hold (SQLSTATE 22001)');
  });
  it('is, for what may pass, until the last attempt', () => {
    for (const error of [{ code: '40001' }, { code: '57P01' }, new Error('connection terminated')]) {
      expect(whyNotToRetry(error, attempt(24))).toBeNull();
      expect(whyNotToRetry(error, attempt(25))).toBe('recording it failed on each of 25 attempts');
    }
  });
});

describe('rendered filenames a bundle could not hold', () => {
  it.each([
    ['surrogates', 'filename "x\\ud800.md" is unsafe: must not contain unpaired UTF-16 surrogates', 'filename "x\\udc00.md" is unsafe: must not contain unpaired UTF-16 surrogates'],
    ['nested', null, 'filename "docs/x.md" needs a directory "docs", but "docs" is a file used by output "first"'],
    ['letterCase', null, 'filename "a.md" differs only in letter case from "A.md", used by output "first"'],
    ['manifest', null, 'filename "MANIFEST.JSON" differs only in letter case from "manifest.json", reserved for the bundle manifest'],
  ])('%s: are refused when rendered, and the rest is bundled', async (names, firstError, secondError) => {
    const executionId = await execute('names-from-plan', { names });
    const done = await waitForExecution(app.url, key, orgId, executionId, 10_000);
    expect(done.status).toBe('partial');
    const [first, second, third] = done.outputs.sort((a: { outputId: string }, b: { outputId: string }) => a.outputId.localeCompare(b.outputId));
    expect([first.status, first.validationErrors]).toEqual(firstError === null ? ['valid', []] : ['invalid', [firstError]]);
    expect([second.filename, second.status, second.validationErrors]).toEqual(['', 'invalid', [secondError]]);
    expect(third.status).toBe('valid');
    expect((await waitForBundle(app.url, key, orgId, executionId, 10_000)).bundleStatus).toBe('ready');
    const bundle = await bundleOf(executionId);
    expect(bundle.entries).toEqual(bundle.contents);
    expect(bundle.entries).toEqual(['manifest.json', 'third.md', ...(firstError === null ? [first.filename] : [])].sort());
  });
});

describe('stored outputs a bundle cannot hold (rows from before the filename rules)', () => {
  /** Runs the sample kit to a ready bundle, then makes its rows look older and asks for the bundle again. */
  const rebundleWith = async (renameSql: string) => {
    const executionId = await execute('service-starter', sampleExecutionBody(projectId).discoveryAnswers);
    await waitForBundle(app.url, key, orgId, executionId, 10_000);
    await sqlAsOwner('update kit_executions set bundle_blob_id = null, bundle_path = null, bundle_size_bytes = null where id = $1', [executionId]);
    await sqlAsOwner(`update kit_outputs set filename = ${renameSql} where execution_id = $1`, [executionId]);
    await sqlAsOwner(`select graphile_worker.add_job('kits.bundle_execution', json_build_object('executionId', $1::text, 'tenantId', $2::text, 'kitRef', 'service-starter@1.0.0'))`, [
      executionId,
      app.bootstrap.tenantId,
    ]);
    return executionId;
  };

  it('leaves the later of two names stored as one out, marked invalid with the reason, and bundles the rest', async () => {
    // What storage made of "x\uD800.md" and "x\uDC00.md" before rendering refused them.
    const executionId = await rebundleWith(`case when output_id in ('openapi', 'readme') then 'x\uFFFD.md' else filename end`);
    const done = await waitForBundle(app.url, key, orgId, executionId, 10_000);
    expect(done).toMatchObject({ status: 'completed', bundleStatus: 'ready', outputsValid: 2, outputsFailed: 1 });
    const readme = done.outputs.find((o: { outputId: string }) => o.outputId === 'readme');
    expect([readme.status, readme.validationErrors]).toEqual(['invalid', ['left out of the bundle: filename "x\uFFFD.md" is already used by output "openapi"']]);
    const bundle = await bundleOf(executionId);
    expect(bundle.entries).toEqual(['deploy/docker-compose.yml', 'manifest.json', 'x\uFFFD.md']);
    expect(bundle.contents).toEqual(bundle.entries);
    expect(JSON.parse(strFromU8(bundle.zip['x\uFFFD.md']!)).openapi).toBe('3.1.0');
  });

  it('ends with no bundle, not "building", when no stored output can be bundled', async () => {
    const executionId = await rebundleWith(`'../' || filename`);
    const done = await waitForBundle(app.url, key, orgId, executionId, 10_000);
    expect(done).toMatchObject({ bundleStatus: 'none', outputsValid: 0, outputsFailed: 3 });
    expect(done.outputs.every((o: { status: string; validationErrors: string[] }) => o.status === 'invalid' && /^left out of the bundle: unsafe path/.test(o.validationErrors.at(-1)!))).toBe(true);
    const link = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: key });
    expect([link.status, link.body.error.message]).toEqual([409, 'This execution produced no valid outputs to bundle']);
  });
});

describe('an execution whose project is deleted while it runs', () => {
  it('drops its outcome quietly: no error line, nothing left behind', async () => {
    await publish(
      fileKit('slow-plan', 'file', { outputs: [{ id: 'only', filename: 'only.md', template: 't/out.hbs', outputType: 'text' }], hooks: { PLAN: 'h/plan.js' } }, {
        't/out.hbs': 'hello\n',
        'h/plan.js': 'function plan() { var until = Date.now() + 1500; while (Date.now() < until) {} return {}; }',
      }),
    );
    const doomed = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Deleted mid-run' } })).body.data.id;
    const started = await call(app.url, `/api/${orgId}/kits/slow-plan/execute`, { apiKey: key, body: sampleExecutionBody(doomed) });
    expect(started.status, started.text).toBe(201);
    const executionId = started.body.data.executionId;
    const deadline = Date.now() + 10_000;
    while ((await call(app.url, `/api/${orgId}/kits/executions/${executionId}`, { apiKey: key })).body.data.status !== 'running') {
      if (Date.now() > deadline) throw new Error('the execution never started');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await call(app.url, `/api/projects/${doomed}`, { method: 'DELETE', apiKey: key })).status).toBe(200);
    const about = () => app.logLines.filter((line) => line.executionId === executionId);
    while (!about().some((line) => String(line.msg).startsWith('execution deleted with its project'))) {
      if (Date.now() > deadline) throw new Error(`no word of the execution: ${JSON.stringify(about())}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(about().filter((line) => Number(line.level) >= 50)).toEqual([]);
    expect(await sqlAsOwner('select id from kit_outputs where execution_id = $1', [executionId])).toEqual([]);
    expect(await sqlAsOwner('select id from kit_executions where id = $1', [executionId])).toEqual([]);
  });
});
