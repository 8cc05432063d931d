import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKitDirectory } from '../../sdk/kit/index.ts';
import { call } from '../helpers/http.ts';
import { sampleKit } from '../helpers/kit-fixtures.ts';
import { countRows } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * Kit packages that are costly or impossible to run are refused at publish, naming the file:
 * templates over the expression limits (checked from their text, before Handlebars parses them)
 * and discovery pools that are not plain data.
 */
let app: TestApp;
let key: string;
let orgId: string;
const publish = (body: unknown) => call(app.url, `/api/${orgId}/kits`, { apiKey: key, body });

beforeAll(async () => {
  app = await startTestApp();
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(() => app?.stop());

function expectRefused(response: Awaited<ReturnType<typeof publish>>, file: string, message: string | RegExp) {
  expect(response.status, response.text.slice(0, 300)).toBe(400);
  expect(response.body.error.code).toBe('VALIDATION_ERROR');
  expect(response.body.error.message).toContain(file);
  expect(response.body.error.details.problems[0]).toEqual({ file, message: typeof message === 'string' ? message : expect.stringMatching(message) });
}

describe('publishing kits over the template expression limits', () => {
  it('refuses a 1.9 MB template of expressions naming the file and the limit, stores nothing, and keeps answering', async () => {
    const before = [await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')];
    const kit = sampleKit({ id: 'expression-heavy' });
    kit.files['templates/readme.md.hbs'] = '{{a}}'.repeat(380_000);
    expectRefused(await publish(kit), 'templates/readme.md.hbs', 'template has more than 5000 expressions, over the limit of 2000 per template');
    expect([await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')]).toEqual(before);
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key })).status).toBe(200);
  });

  it('refuses a template just over the limit per template, and a kit over the limit per kit', async () => {
    const justOver = sampleKit({ id: 'expression-heavy' });
    justOver.files['templates/readme.md.hbs'] = '{{a}}'.repeat(2001);
    expectRefused(await publish(justOver), 'templates/readme.md.hbs', 'template has 2001 expressions, over the limit of 2000 per template');

    const many = sampleKit({ id: 'expression-heavy' });
    for (const n of [1, 2, 3]) {
      many.files[`templates/extra${n}.md.hbs`] = '{{#each items}}{{name}}{{/each}}'.repeat(450);
      many.manifest.outputs.push({ id: `extra${n}`, filename: `extra${n}.md`, template: `templates/extra${n}.md.hbs`, outputType: 'markdown' });
    }
    expectRefused(await publish(many), '(package)', /^templates hold \d+ expressions in all, over the limit of 5000 per kit \(largest: templates\/extra1\.md\.hbs 1800/);
  });

  it('publishes a kit whose templates are just within both limits', async () => {
    const within = sampleKit({ id: 'expression-within' });
    within.files['templates/readme.md.hbs'] = '{{#each items}}{{name}}{{/each}}'.repeat(450);
    within.files['templates/extra.md.hbs'] = '{{a}}'.repeat(2000);
    within.manifest.outputs.push({ id: 'extra', filename: 'extra.md', template: 'templates/extra.md.hbs', outputType: 'markdown' });
    const response = await publish(within);
    expect(response.status, response.text.slice(0, 300)).toBe(201);
  });

  it('still refuses a template that parses but does not compile, naming the file and line', async () => {
    const kit = sampleKit({ id: 'uncompilable' });
    kit.files['templates/readme.md.hbs'] = '# Title\n{{> entityList one two}}\n';
    const response = await publish(kit);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('templates/readme.md.hbs:2: template does not compile: Unsupported number of partial arguments');
  });
});

describe('discovery pools that are not plain data', () => {
  const cyclicPool = 'questions: &q\n  - *q\n';
  const withPool = (id: string, file: string, source: string) => {
    const kit = sampleKit({ id });
    kit.manifest.discovery.pools.push(file);
    kit.files[file] = source;
    return kit;
  };

  it('refuses a YAML pool whose alias contains itself at publish, naming the file', async () => {
    const before = [await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')];
    expectRefused(await publish(withPool('cyclic-pool', 'discovery/loop.yaml', cyclicPool)), 'discovery/loop.yaml', /^cannot parse discovery pool: an alias refers to a node that contains it/);
    expect([await countRows(app.database.ownerUrl, 'kits'), await countRows(app.database.ownerUrl, 'kit_versions')]).toEqual(before);
  });

  it('refuses it in the local validator too', async () => {
    const kit = withPool('cyclic-pool', 'discovery/loop.yaml', cyclicPool);
    const dir = await scratchDir('kit');
    await writeFile(join(dir, 'kit.json'), JSON.stringify(kit.manifest, null, 2));
    for (const [file, contents] of Object.entries(kit.files)) {
      await mkdir(dirname(join(dir, file)), { recursive: true });
      await writeFile(join(dir, file), contents);
    }
    const loaded = await loadKitDirectory(dir);
    expect(loaded.ok).toBe(false);
    expect(!loaded.ok && loaded.problems).toEqual([{ file: 'discovery/loop.yaml', message: expect.stringMatching(/^cannot parse discovery pool: an alias refers to a node that contains it/) }]);
  });

  it('refuses a YAML alias expansion bomb, naming the file', async () => {
    const bomb = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (const [previous, name] of [['a', 'b'], ['b', 'c'], ['c', 'd'], ['d', 'e'], ['e', 'f'], ['f', 'g']]) bomb.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
    expectRefused(await publish(withPool('bomb-pool', 'discovery/bomb.yaml', bomb.join('\n'))), 'discovery/bomb.yaml', /^cannot parse discovery pool: Excessive alias count/);
  });
});

describe('checking a costly kit at publish', () => {
  it('runs off the API\'s thread and outside any transaction: other requests are answered while it compiles', async () => {
    // Schemas near the kit's budget: compiling them takes the better part of a second.
    const largeSchema = () => {
      const properties: Record<string, unknown> = {};
      for (let i = 0; JSON.stringify(properties).length < 120 * 1024; i += 1) properties[`field${i}`] = { type: 'string', maxLength: 10 };
      return JSON.stringify({ type: 'object', properties });
    };
    const kit = sampleKit({ id: 'costly-schemas' });
    Object.assign(kit.files, { 'schemas/openapi.schema.json': largeSchema(), 'schemas/compose.schema.json': largeSchema() });
    let published = false;
    const publishing = publish(kit).finally(() => (published = true));
    // On the API's thread the compile would hold every request until it ended: one answer at most.
    let answeredMeanwhile = 0;
    // While the package is checked, the publish holds no transaction open (and so no connection
    // of the API's small pool): a few slow publishes must not stall every tenant.
    let transactionsHeld = 0;
    while (!published) {
      // Any answer counts (past the anonymous rate limit it is a 429, answered just as promptly).
      await call(app.url, '/api/health');
      if (!published) answeredMeanwhile += 1;
      // A transaction caught between two of its statements is idle for a moment; one left waiting on the check, for long.
      const open = await countRows(
        app.database.ownerUrl,
        "pg_stat_activity where datname = current_database() and state = 'idle in transaction' and clock_timestamp() - state_change > interval '250 milliseconds'",
      );
      if (!published) transactionsHeld = Math.max(transactionsHeld, open);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect((await publishing).status).toBe(201);
    expect(answeredMeanwhile).toBeGreaterThanOrEqual(5);
    expect(transactionsHeld).toBe(0);
  });
});
