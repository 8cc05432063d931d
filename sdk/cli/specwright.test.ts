import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, truncate, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKitForTest } from '../kit/index.ts';
import { consoleOutput } from './specwright.ts';
import { cliInProcess } from './test-support/cli-in-process.ts';
import { startKitPublishServer, type KitPublishServer } from './test-support/kit-publish-server.ts';

const execFileAsync = promisify(execFile);
let work: string;
let registry: KitPublishServer;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'specwright-cli-'));
  registry = await startKitPublishServer();
});
afterAll(async () => {
  await registry.close();
  await rm(work, { recursive: true, force: true });
});

const cli = cliInProcess;

async function newKit(name: string): Promise<string> {
  const dir = join(work, name);
  expect((await cli(['kit', 'init', dir])).code).toBe(0);
  return dir;
}

async function editJson(path: string, change: (value: any) => void): Promise<void> {
  const value = JSON.parse(await readFile(path, 'utf8'));
  change(value);
  await writeFile(path, JSON.stringify(value, null, 2));
}

describe('specwright kit init / validate / test', () => {
  it('scaffolds a kit that validates and passes its example', async () => {
    const dir = join(work, 'orders-docs');
    const init = await cli(['kit', 'init', dir]);
    expect(init.code).toBe(0);
    expect(init.out.at(-1)).toBe(`Kit "orders-docs" is ready. Next: specwright kit validate ${dir} && specwright kit test ${dir}`);
    expect(await cli(['kit', 'validate', dir])).toEqual({ code: 0, out: ['orders-docs@0.1.0 is valid: 2 outputs, 4 files, phases CHECK PLAN VALIDATE'], err: [] });
    const test = await cli(['kit', 'test', dir]);
    expect(test.code).toBe(0);
    expect(test.out[0]).toMatch(/^examples\/acme\.json: completed \(\d+ ms\)$/);
    expect(test.out.slice(1)).toEqual(['  ok   readme → README.md: valid', '  ok   summary → summary.json: valid', 'orders-docs@0.1.0: 1 example passed']);
    const again = await cli(['kit', 'init', dir]);
    expect(again).toEqual({ code: 1, out: [], err: [`specwright: ${dir} is not empty; pick a new directory`] });
  });

  it('prints every problem as file:line: message, with exit code 1', async () => {
    const dir = await newKit('broken');
    await writeFile(join(dir, 'kit.json'), (await readFile(join(dir, 'kit.json'), 'utf8')).replace('"templates/readme.md.hbs"', '"templates/gone.hbs"'));
    await writeFile(join(dir, 'templates/summary.json.hbs'), '{\n  "a": {{#if x}}1\n}\n');
    await writeFile(join(dir, 'schemas/summary.schema.json'), '{\n  "type": "object",\n  "properties": {\n    "a": { "type": "nope" }\n  }\n}\n');
    await writeFile(join(dir, 'hooks/plan.js'), 'function plan(context) {\n  return {\n}\n');
    const result = await cli(['kit', 'validate', dir]);
    expect(result.code).toBe(1);
    expect(result.out).toEqual([]);
    expect(result.err).toEqual([
      'templates/gone.hbs: missing file (referenced by kit.json outputs[0].template)',
      "templates/summary.json.hbs:4: template does not compile: Parse error on line 4: Expecting 'OPEN_INVERSE_CHAIN', 'INVERSE', 'OPEN_ENDBLOCK', got 'EOF'",
      expect.stringMatching(/^schemas\/summary\.schema\.json:4: not a valid JSON Schema: schema is invalid: data\/properties\/a\/type must be equal to one of the allowed values/),
      expect.stringMatching(/^hooks\/plan\.js:4: hook is not valid JavaScript: Unexpected end of input$/),
      `4 problems in ${dir}`,
    ]);

    await editJson(join(dir, 'kit.json'), (m) => {
      m.metadata.version = 'v1';
      m.outputs[1].outputType = 'xml';
    });
    const manifest = await cli(['kit', 'validate', dir]);
    expect(manifest.err.slice(0, 2)).toEqual([
      'kit.json:5: metadata.version: must be a semantic version such as 1.2.0',
      expect.stringMatching(/^kit\.json:36: outputs\[1\]\.outputType: Invalid option/),
    ]);
    await writeFile(join(dir, 'kit.json'), '{\n  "metadata": {\n');
    expect((await cli(['kit', 'validate', dir])).err[0]).toMatch(/^kit\.json(:\d+)?: not valid JSON: /);
    expect((await cli(['kit', 'validate', join(work, 'nowhere')])).err).toEqual([`kit.json: no kit.json in ${join(work, 'nowhere')}`, `1 problem in ${join(work, 'nowhere')}`]);
  });

  it('names the file and line of a partial the kit does not provide, as the server refuses it', async () => {
    const dir = await newKit('missing-partial');
    await writeFile(join(dir, 'templates/readme.md.hbs'), '# Title\n\n{{> footer}}\n');
    await editJson(join(dir, 'kit.json'), (m) => { m.outputs[1].filename = '{{> slug}}.json'; });
    const result = await cli(['kit', 'validate', dir]);
    expect(result).toMatchObject({ code: 1, out: [] });
    expect(result.err).toEqual([
      'templates/readme.md.hbs:3: template uses partial "footer", which the kit does not provide (kit.json declares no partials; no {{#*inline "footer"}} either)',
      expect.stringMatching(/^kit\.json:\d+: outputs\[1\]\.filename: template uses partial "slug", which the kit does not provide/),
      `2 problems in ${dir}`,
    ]);
  });

  it('refuses files that are not UTF-8 text or too large before reading them, as the server would', async () => {
    const dir = await newKit('not-text');
    // A template saved as UTF-16 (NUL bytes, which the server cannot store) and one in Latin-1.
    await writeFile(join(dir, 'templates/readme.md.hbs'), Buffer.from('# {{businessProfile.company.name}}\n', 'utf16le'));
    await writeFile(join(dir, 'hooks/plan.js'), Buffer.from('// Caf\xe9\nfunction plan() { return null; }\n', 'latin1'));
    // Sparse: 3 GiB on paper, nothing on disk.
    await truncate(join(dir, 'schemas/summary.schema.json'), 3 * 1024 ** 3);
    const result = await cli(['kit', 'validate', dir]);
    expect(result.code).toBe(1);
    expect(result.err).toEqual([
      'templates/readme.md.hbs: contains NUL characters; kit files must be UTF-8 text',
      'schemas/summary.schema.json: file is larger than 2097152 bytes',
      'hooks/plan.js: is not valid UTF-8 text',
      `3 problems in ${dir}`,
    ]);
  });

  it('fails kit test (exit 1) when an example makes an output invalid or misses inputs, and reports each output', async () => {
    const dir = await newKit('strict-summary');
    await writeFile(join(dir, 'examples/empty-name.json'), JSON.stringify({ businessProfile: { company: { name: 'Acme' } }, discoveryAnswers: { entities: ['Bad Name!'] } }));
    await writeFile(join(dir, 'examples/missing.json'), JSON.stringify({ projectId: 'p' }));
    await editJson(join(dir, 'schemas/summary.schema.json'), (s) => {
      s.properties.entities.items.properties.slug.pattern = '^[a-z]+$';
    });
    const result = await cli(['kit', 'test', dir]);
    expect(result.code).toBe(1);
    expect(result.out.join('\n')).toContain('examples/empty-name.json: partial — some outputs are invalid: summary');
    expect(result.out).toContain('  FAIL summary → summary.json: invalid');
    expect(result.out).toContain('       error: schema: /entities/0/slug: must match pattern "^[a-z]+$"');
    expect(result.out.join('\n')).toContain('examples/missing.json: failed — CHECK: missing required inputs: businessProfile.company.name, discoveryAnswers.entities');
    expect(result.err).toEqual([`strict-summary@0.1.0 (${dir}): FAILED — 2 of 3 examples did not complete`]);
  });

  it('names the folder, and the kit when kit.json says which, in the summary of kit test on a kit that does not load', async () => {
    const dir = await newKit('does-not-load');
    await writeFile(join(dir, 'templates/summary.json.hbs'), '{\n  "a": {{#if x}}1\n}\n');
    await rm(join(dir, 'templates/readme.md.hbs'));
    const result = await cli(['kit', 'test', dir]);
    expect(result).toMatchObject({ code: 1, out: ['templates/readme.md.hbs: missing file (referenced by kit.json outputs[0].template)', expect.stringMatching(/^templates\/summary\.json\.hbs:4: template does not compile/)] });
    expect(result.err).toEqual([`does-not-load@0.1.0 (${dir}): FAILED — 2 problems; the kit does not load, so no example ran`]);

    await writeFile(join(dir, 'kit.json'), '{\n  "metadata": {\n');
    expect((await cli(['kit', 'test', dir])).err).toEqual([`${dir}: FAILED — 1 problem; the kit does not load, so no example ran`]);
    const nowhere = join(work, 'no-kit-here');
    expect(await cli(['kit', 'test', nowhere])).toEqual({ code: 1, out: [`kit.json: no kit.json in ${nowhere}`], err: [`${nowhere}: FAILED — 1 problem; the kit does not load, so no example ran`] });
  });

  it('scaffolds a CHECK that refuses, naming each, entities the PLAN hook cannot take, instead of failing with a JavaScript error', async () => {
    const dir = await newKit('careful-summary');
    await writeFile(join(dir, 'examples/odd.json'), JSON.stringify({
      businessProfile: { company: { name: 'Acme' } },
      discoveryAnswers: { entities: [{ description: 'no name' }, '日本', 'Order', null, 'order!', 42, { name: '  ' }] },
    }));
    await writeFile(join(dir, 'examples/words.json'), JSON.stringify({
      businessProfile: { company: { name: 'Acme' } },
      discoveryAnswers: { entities: [{ name: 'Größe Ding' }, 'toString', 'constructor', '-Launch pad-', 'Ærø Łódź'] },
    }));
    await writeFile(join(dir, 'examples/not-a-list.json'), JSON.stringify({ businessProfile: { company: { name: 'Acme' } }, discoveryAnswers: { entities: 'Rocket' } }));
    const result = await cli(['kit', 'test', dir]);
    expect(result.code).toBe(1);
    expect(result.out.filter((line) => line.startsWith('examples/')).map((line) => line.replace(/ \(\d+ ms\)$/, ''))).toEqual([
      'examples/acme.json: completed',
      'examples/not-a-list.json: failed — CHECK: CHECK failed: discoveryAnswers.entities must be a list of names',
      'examples/odd.json: failed — CHECK: CHECK failed: ' + [
        'discoveryAnswers.entities[0] must be a name or an object with a name',
        'discoveryAnswers.entities[1] ("日本") needs Latin letters or digits for its slug',
        'discoveryAnswers.entities[3] must be a name or an object with a name',
        'discoveryAnswers.entities[4] ("order!") and discoveryAnswers.entities[2] ("Order") both have the slug "order"',
        'discoveryAnswers.entities[5] must be a name or an object with a name',
        'discoveryAnswers.entities[6] must be a name or an object with a name',
      ].join('; '),
      'examples/words.json: completed',
    ]);
    expect(result.err).toEqual([`careful-summary@0.1.0 (${dir}): FAILED — 2 of 4 examples did not complete`]);
    const run = await runKitForTest(dir, JSON.parse(await readFile(join(dir, 'examples/words.json'), 'utf8')));
    expect((run.parsed('summary') as { entities: unknown }).entities).toEqual([
      { name: 'Größe Ding', slug: 'grosse-ding' }, { name: 'toString', slug: 'tostring' }, { name: 'constructor', slug: 'constructor' }, { name: '-Launch pad-', slug: 'launch-pad' },
      { name: 'Ærø Łódź', slug: 'aero-lodz' },
    ]);
  });

  it('names the problems of a component kit that does not load, which a run of the composite reports only as "not found"', async () => {
    const kits = join(work, 'composite-family');
    const part = join(kits, 'part');
    expect((await cli(['kit', 'init', part])).code).toBe(0);
    const bundle = join(kits, 'bundle');
    await mkdir(join(bundle, 'templates'), { recursive: true });
    await mkdir(join(bundle, 'examples'));
    await writeFile(join(bundle, 'kit.json'), JSON.stringify({
      metadata: { id: 'bundle', displayName: 'Bundle', version: '0.1.0', description: 'Runs part.', author: 'You', kitType: 'composite' },
      platform: { name: 'bundle', category: 'starter' },
      phases: ['VALIDATE'],
      components: [{ kitId: 'part', prefix: 'part' }],
      outputs: [{ id: 'index', filename: 'INDEX.md', template: 'templates/index.md.hbs', outputType: 'markdown' }],
      discovery: { pools: [] },
    }, null, 2));
    await writeFile(join(bundle, 'templates/index.md.hbs'), '# Index\n');
    await writeFile(join(bundle, 'examples/acme.json'), await readFile(join(part, 'examples/acme.json'), 'utf8'));
    const passing = await cli(['kit', 'test', bundle]);
    expect([passing.code, passing.out.at(-1)]).toEqual([0, 'bundle@0.1.0: 1 example passed']);

    await writeFile(join(part, 'templates/readme.md.hbs'), '{{#if}}');
    const result = await cli(['kit', 'test', bundle]);
    expect(result.code).toBe(1);
    expect(result.out[0]).toMatch(/:1: template does not compile/);
    expect(result.out[0]?.startsWith(`${join(part, 'templates/readme.md.hbs')}:1: `)).toBe(true);
    expect(result.out[1]).toMatch(/^examples\/acme\.json: failed — COMPOSE: component "part": kit part was not found/);
    expect(result.err).toEqual([`bundle@0.1.0 (${bundle}): FAILED — 1 problem; 1 of 1 example did not complete`]);
  });

  it('answers usage errors with exit code 2 and one line', async () => {
    expect(await cli(['kit'])).toMatchObject({ code: 2, err: ['specwright: missing kit command (init, validate, test or publish)', 'Run "specwright kit --help" for usage.'] });
    expect((await cli(['kit', 'build', 'x'])).code).toBe(2);
    expect((await cli(['kit', 'test'])).err[0]).toBe('specwright: "kit test" needs a kit directory');
    expect((await cli(['kit', 'test', 'x', '--bogus'])).err[0]).toMatch(/^specwright: Unknown option '--bogus'/);
    // Node's message for an option whose value is missing spans three lines.
    expect((await cli(['kit', 'publish', 'x', '--org', '--api-key', 'k'])).err).toEqual([
      "specwright: Option '--org' argument is ambiguous. Did you forget to specify the option argument for '--org'? To specify an option argument starting with a dash use '--org=-XYZ'.",
      'Run "specwright kit --help" for usage.',
    ]);
    expect((await cli(['--help'])).out[0]).toMatch(/^Usage: specwright kit <command> <dir> \[options\]\n/);
  });

  it('refuses an empty directory argument (an unset variable) before touching the current directory', async () => {
    for (const command of ['init', 'validate', 'test', 'publish']) {
      expect(await cli(['kit', command, ''])).toMatchObject({ code: 2, err: [`specwright: "kit ${command}" needs a kit directory`, 'Run "specwright kit --help" for usage.'] });
    }
  });

  it('says, at init, that the directory is a symbolic link to a folder that does not exist', async () => {
    const dir = join(work, 'dangling-link');
    await symlink(join(work, 'gone'), dir);
    expect(await cli(['kit', 'init', dir])).toEqual({ code: 1, out: [], err: [`specwright: ${dir} is a symbolic link to a folder that does not exist`] });
  });

  it('refuses, at init, a kit id that validate would refuse, and writes nothing', async () => {
    for (const [id, reason] of [
      ['executions', `"executions" is reserved: the registry's routes use it; choose another id`],
      ['credentials', `"credentials" is reserved: the registry's routes use it; choose another id`],
      ['a'.repeat(65), 'must be at most 64 characters'],
      ['Not_A_Slug', 'must be a slug: lowercase letters, digits and hyphens'],
    ] as const) {
      const dir = join(work, `bad-id-${id.length}-${id.slice(0, 3)}`);
      const result = await cli(['kit', 'init', dir, '--id', id]);
      expect(result, id).toEqual({ code: 1, out: [], err: [`specwright: kit id: ${reason}`] });
      await expect(readFile(join(dir, 'kit.json'), 'utf8')).rejects.toThrow(/ENOENT/);
    }
  });
});

describe('files a kit may not hold', () => {
  it('refuses a kit.json that is a symlink to a file outside the kit, as it refuses referenced files', async () => {
    const dir = await newKit('manifest-elsewhere');
    const outside = join(work, 'outside-kit.json');
    await writeFile(outside, await readFile(join(dir, 'kit.json'), 'utf8'));
    await rm(join(dir, 'kit.json'));
    await symlink(outside, join(dir, 'kit.json'));
    expect(await cli(['kit', 'validate', dir])).toEqual({ code: 1, out: [], err: ['kit.json: resolves outside the kit directory', `1 problem in ${dir}`] });
    const before = registry.received.length;
    const published = await cli(['kit', 'publish', dir, '--url', registry.url, '--api-key', registry.apiKey, '--org', registry.orgId]);
    expect(published).toMatchObject({ code: 1, err: ['kit.json: resolves outside the kit directory', 'specwright: publish failed: the kit has 1 problem; fix them before publishing'] });
    expect(registry.received.length).toBe(before);
  });

  it.skipIf(process.platform === 'win32')('refuses a referenced file that is a FIFO instead of waiting on it forever', async () => {
    const dir = await newKit('fifo-hook');
    await rm(join(dir, 'hooks/plan.js'));
    await execFileAsync('mkfifo', [join(dir, 'hooks/plan.js')]);
    // As a separate process, so a read that never ends is killed rather than holding this worker.
    const bin = join(import.meta.dirname, 'bin.mjs');
    const run = (args: string[]) => execFileAsync(process.execPath, [bin, ...args], { timeout: 15_000 }).then(() => null, (e: { code: number | null; killed: boolean; stderr: string }) => e);
    const validated = await run(['kit', 'validate', dir]);
    expect(validated).toMatchObject({ code: 1, killed: false, stderr: `hooks/plan.js: not a regular file\n1 problem in ${dir}\n` });
    const published = await run(['kit', 'publish', dir, '--url', registry.url, '--api-key', registry.apiKey, '--org', registry.orgId]);
    expect(published).toMatchObject({ code: 1, killed: false, stderr: 'hooks/plan.js: not a regular file\nspecwright: publish failed: the kit has 1 problem; fix them before publishing\n' });
  }, 40_000);

  it('names an example that cannot be read, and fails kit test with exit code 1', async () => {
    const dir = await newKit('example-dir');
    await mkdir(join(dir, 'examples/dir.json'));
    const result = await cli(['kit', 'test', dir]);
    expect(result.code).toBe(1);
    expect(result.out[0]).toBe('examples/dir.json: not a regular file');
    expect(result.out).toContain('  ok   readme → README.md: valid');
    expect(result.err).toEqual([`example-dir@0.1.0 (${dir}): FAILED — 1 problem`]);
  });

  it('reads an example saved with a UTF-8 byte order mark, as it reads kit.json', async () => {
    const dir = await newKit('bom-example');
    const example = await readFile(join(dir, 'examples/acme.json'), 'utf8');
    await writeFile(join(dir, 'examples/acme.json'), `\uFEFF${example}`);
    await writeFile(join(dir, 'kit.json'), `\uFEFF${await readFile(join(dir, 'kit.json'), 'utf8')}`);
    const result = await cli(['kit', 'test', dir]);
    expect(result.err).toEqual([]);
    expect(result.out[0]).toMatch(/^examples\/acme\.json: completed \(\d+ ms\)$/);
    expect(result.out.at(-1)).toBe('bom-example@0.1.0: 1 example passed');
    expect(result.code).toBe(0);
  });

  it('says, when given kit.json instead of the kit folder, to give the folder', async () => {
    const dir = await newKit('file-not-folder');
    const manifest = join(dir, 'kit.json');
    expect(await cli(['kit', 'validate', manifest])).toEqual({
      code: 1, out: [], err: [`kit.json: ${manifest} is not a directory: give the folder that holds kit.json`, `1 problem in ${manifest}`],
    });
    const tested = await cli(['kit', 'test', manifest]);
    expect([tested.code, tested.out[0]]).toEqual([1, `kit.json: ${manifest} is not a directory: give the folder that holds kit.json`]);
  });
});

describe('specwright kit publish', () => {
  it('uploads the manifest and exactly the referenced files, shows progress and prints the published version', async () => {
    const dir = await newKit('publish-me');
    await mkdir(join(dir, 'notes'));
    await writeFile(join(dir, 'notes/private.txt'), 'not part of the kit');
    const env = { SPECWRIGHT_URL: registry.url, SPECWRIGHT_API_KEY: registry.apiKey, SPECWRIGHT_ORG: registry.orgId };
    const result = await cli(['kit', 'publish', dir], env);
    expect(result.err).toEqual([
      expect.stringMatching(/^Validated publish-me@0\.1\.0: 4 files, [\d.]+ KiB$/),
      `Uploading to ${registry.url}: 100%`,
      'Waiting for the server…',
    ]);
    expect(result.out).toEqual([expect.stringMatching(/^Published publish-me@0\.1\.0 \(Publish Me, id [0-9a-f-]{36}, active\)$/)]);
    expect(result.code).toBe(0);
    const request = registry.received.at(-1)!;
    expect(request.path).toBe(`/api/${registry.orgId}/kits`);
    expect(request.headers['x-api-key']).toBe(registry.apiKey);
    expect(request.headers['content-type']).toBe('application/json');
    const body = request.body as { manifest: unknown; files: Record<string, string> };
    expect(body.manifest).toEqual(JSON.parse(await readFile(join(dir, 'kit.json'), 'utf8')));
    expect(Object.keys(body.files).sort()).toEqual(['hooks/plan.js', 'schemas/summary.schema.json', 'templates/readme.md.hbs', 'templates/summary.json.hbs']);
    expect(body.files['hooks/plan.js']).toBe(await readFile(join(dir, 'hooks/plan.js'), 'utf8'));

    const again = await cli(['kit', 'publish', dir], env);
    expect(again).toMatchObject({ code: 0, out: [expect.stringMatching(/^Already published: publish-me@0\.1\.0 \(Publish Me, id [0-9a-f-]{36}, active\) is this very package, published \S+; nothing changed$/)] });

    await writeFile(join(dir, 'hooks/plan.js'), `${body.files['hooks/plan.js']}\n// changed since 0.1.0 was published\n`);
    const conflict = await cli(['kit', 'publish', dir], env);
    expect(conflict).toMatchObject({ code: 1, out: [] });
    expect(conflict.err.at(-1)).toBe('specwright: publish failed: Kit publish-me version 0.1.0 already exists; kit versions are immutable [CONFLICT 409]');
  });

  it('prints the server error in one line: unauthorized, unknown org, kits disabled, validation problems, unreachable', async () => {
    const dir = await newKit('rejected');
    const flags = ['--url', registry.url, '--api-key', registry.apiKey, '--org', registry.orgId];
    const lastError = async (args: string[], exitCode = 1) => {
      const result = await cli(['kit', 'publish', dir, ...args]);
      expect(result.code).toBe(exitCode);
      return result.err.at(-1);
    };
    expect(await lastError([...flags.slice(0, 2), '--api-key', 'swk_wrong', '--org', registry.orgId])).toBe('specwright: publish failed: Invalid or missing credentials [UNAUTHORIZED 401]');
    expect(await lastError([...flags.slice(0, 4), '--org', '00000000-0000-4000-8000-000000000000'])).toBe('specwright: publish failed: Organization not found [NOT_FOUND 404]');
    registry.kitsEnabled = false;
    expect(await lastError(flags)).toBe('specwright: publish failed: Kits are not enabled for this tenant (kits_enabled is off) [FORBIDDEN 403]');
    registry.kitsEnabled = true;
    registry.forcedProblems = [{ file: 'templates/readme.md.hbs', line: 3, message: 'uses a helper the server does not know' }, { file: 'kit.json', message: 'kitType file may not declare credentials' }];
    const invalid = await cli(['kit', 'publish', dir, ...flags]);
    registry.forcedProblems = null;
    expect(invalid.err.slice(-3)).toEqual([
      'templates/readme.md.hbs:3: uses a helper the server does not know',
      'kit.json: kitType file may not declare credentials',
      'specwright: publish failed: The kit package is invalid [VALIDATION_ERROR 400]',
    ]);
    registry.forcedIssues = [
      { field: `files.templates/${'a'.repeat(600)}.hbs`, issue: 'Too big: expected string to have <=500 characters' },
      { field: 'manifest.metadata.id', issue: 'must not contain the NUL character (\\u0000)' },
      { field: 'orgId', issue: 'Invalid UUID' },
    ];
    const refusedFields = await cli(['kit', 'publish', dir, ...flags]);
    registry.forcedIssues = null;
    expect(refusedFields.err.slice(-4)).toEqual([
      `templates/${'a'.repeat(600)}.hbs: Too big: expected string to have <=500 characters`,
      'kit.json: metadata.id: must not contain the NUL character (\\u0000)',
      '(request): orgId: Invalid UUID',
      'specwright: publish failed: Request validation failed [VALIDATION_ERROR 400]',
    ]);
    // Exit code 3: nothing wrong with the kit or the command; the same publish may work later.
    expect(await lastError(['--url', 'http://127.0.0.1:9', '--api-key', 'k', '--org', registry.orgId], 3)).toBe('specwright: publish failed: cannot reach http://127.0.0.1:9 (ECONNREFUSED) [UNREACHABLE]');
    expect(await lastError(['--url', registry.url, '--api-key', 'k', '--org', 'acme'])).toBe('specwright: publish failed: the organization id must be a uuid (the value given is not shown: it may be a key)');
    // The key travels with the request: never over plain http to another machine, never echoed.
    expect(await lastError(['--url', 'http://specs.example.com', '--api-key', 'k', '--org', registry.orgId])).toBe(
      'specwright: publish failed: the server URL must be https: over http://specs.example.com the API key would travel in clear text',
    );
    expect(await lastError(['--url', 'swk_abcdef_0123456789', '--api-key', 'k', '--org', registry.orgId])).toBe('specwright: publish failed: the server URL is not a URL (expected https://host[:port])');
    expect(await lastError(['--url', 'https://user:secret@specs.example.com', '--api-key', 'k', '--org', registry.orgId])).toBe(
      'specwright: publish failed: the server URL must not carry credentials; pass the API key with --api-key',
    );
    await writeFile(join(dir, 'templates/readme.md.hbs'), '{{#if}}');
    const local = await cli(['kit', 'publish', dir, ...flags]);
    expect(local.err.at(-1)).toBe('specwright: publish failed: the kit has 1 problem; fix them before publishing');
    expect(local.err[0]).toMatch(/^templates\/readme\.md\.hbs:1: template does not compile/);
  });

  it('says, when the server refuses the upload as too large, how large the kit is as a request body', async () => {
    const dir = await newKit('too-large');
    registry.bodyLimitBytes = 1_000;
    try {
      const result = await cli(['kit', 'publish', dir, '--url', registry.url, '--api-key', registry.apiKey, '--org', registry.orgId]);
      expect(result.code).toBe(1);
      expect(result.err.at(-1)).toMatch(
        /^specwright: publish failed: The request body exceeds the size limit: the kit is [\d.]+ KiB as a JSON request body \(escaping grows text full of quotes, backslashes or control characters\); the server takes up to its UPLOAD_LIMIT_BYTES \[PAYLOAD_TOO_LARGE 413\]$/,
      );
    } finally {
      registry.bodyLimitBytes = null;
    }
  });

  it('takes an organization id with surrounding whitespace (a CRLF .env file), as it takes the API key', async () => {
    const dir = await newKit('crlf-env');
    const result = await cli(['kit', 'publish', dir], { SPECWRIGHT_URL: `${registry.url}\r`, SPECWRIGHT_API_KEY: `${registry.apiKey}\r`, SPECWRIGHT_ORG: `${registry.orgId}\r` });
    expect(result.out).toEqual([expect.stringMatching(/^Published crlf-env@0\.1\.0 /)]);
    expect(result.code).toBe(0);
    expect(registry.received.at(-1)!.path).toBe(`/api/${registry.orgId}/kits`);
  });

  it('tells a proxy\'s refusal (413, 429, 5xx page) from a wrong --url, and shows the Retry-After a refusal names', async () => {
    const dir = await newKit('behind-a-proxy');
    const flags = ['--url', registry.url, '--api-key', registry.apiKey, '--org', registry.orgId];
    const lastError = async (answer: KitPublishServer['forcedAnswer']) => {
      registry.forcedAnswer = answer;
      try {
        const result = await cli(['kit', 'publish', dir, ...flags]);
        // A refusal for now (429, 5xx) is exit code 3, try again; any other answer is 1.
        expect(result.code).toBe(answer !== null && (answer.status === 429 || answer.status >= 500) ? 3 : 1);
        return result.err.at(-1);
      } finally {
        registry.forcedAnswer = null;
      }
    };
    const origin = registry.url;
    const html = (status: number, headers: Record<string, string> = {}) => ({ status, headers: { 'Content-Type': 'text/html', ...headers }, body: `<html><body><h1>${status}</h1>nginx</body></html>` });
    expect(await lastError(html(502))).toBe(
      `specwright: publish failed: ${origin} answered HTTP 502 with a body that is not a Specwright response: a proxy in front of the service refused the request or could not reach the service; try again later [BAD_RESPONSE 502]`,
    );
    expect(await lastError(html(503, { 'Retry-After': '120' }))).toBe(
      `specwright: publish failed: ${origin} answered HTTP 503 with a body that is not a Specwright response: a proxy in front of the service refused the request or could not reach the service; try again later (Retry-After: 120 s) [BAD_RESPONSE 503]`,
    );
    expect(await lastError(html(413))).toMatch(
      /answered HTTP 413 with a body that is not a Specwright response: a proxy in front of the service refused the upload as too large: the kit is [\d.]+ KiB as a JSON request body \(escaping grows text full of quotes, backslashes or control characters\) \[BAD_RESPONSE 413\]$/,
    );
    // A page that is not a refusal still points at --url.
    expect(await lastError(html(404))).toBe(
      `specwright: publish failed: ${origin} answered HTTP 404 with a body that is not a Specwright response; --url should be the service's base URL (https://host[:port], without /api or /trpc) [BAD_RESPONSE 404]`,
    );
    const rateLimited = { success: false, error: { code: 'RATE_LIMITED', message: 'Too many requests; retry after the time in Retry-After' } };
    expect(await lastError({ status: 429, headers: { 'Content-Type': 'application/json', 'Retry-After': '17' }, body: JSON.stringify(rateLimited) })).toBe(
      'specwright: publish failed: Too many requests; retry after the time in Retry-After (Retry-After: 17 s) [RATE_LIMITED 429]',
    );
  });

  it('ends a progress line an upload left open before printing the error, on a terminal', () => {
    const written: string[] = [];
    const stream = { isTTY: true, write: (text: string) => written.push(text) };
    const io = consoleOutput(stream, stream);
    io.progress('Uploading to https://specs.example.com: 40%');
    io.err('specwright: publish failed: cannot reach https://specs.example.com (ECONNRESET) [UNREACHABLE]');
    expect(written.join('')).toBe('\r\u001b[2KUploading to https://specs.example.com: 40%\nspecwright: publish failed: cannot reach https://specs.example.com (ECONNRESET) [UNREACHABLE]\n');
    written.length = 0;
    io.progress('Waiting for the server…', true);
    io.out('Published');
    expect(written.join('')).toBe('\r\u001b[2KWaiting for the server…\nPublished\n');
  });

  it('never echoes an organization id that is not a uuid: it may be the API key, passed in the wrong place', async () => {
    const dir = await newKit('swapped-flags');
    const key = 'swk_abcdefghijkl_aVerySecretPartThatMustNotBePrinted';
    const result = await cli(['kit', 'publish', dir, '--url', registry.url, '--api-key', '00000000-0000-4000-8000-000000000000', '--org', key]);
    expect(result.code).toBe(1);
    expect(result.err.at(-1)).toBe('specwright: publish failed: the organization id must be a uuid (the value given is not shown: it may be a key)');
    expect([...result.out, ...result.err].join('\n')).not.toContain('aVerySecret');
  });

  it('never echoes an API key pasted among the arguments, and says where it was', async () => {
    const dir = await newKit('pasted-key');
    const key = 'swk_abcdefghijkl_aVerySecretPartThatMustNotBePrinted';
    const extra = await cli(['kit', 'publish', dir, key, '--url', registry.url, '--org', registry.orgId]);
    expect(extra).toMatchObject({ code: 2, err: ['specwright: an extra argument looks like an API key (not shown); pass the key with --api-key or SPECWRIGHT_API_KEY', 'Run "specwright kit --help" for usage.'] });
    const asCommand = await cli(['kit', key]);
    expect(asCommand).toMatchObject({ code: 2, err: ['specwright: the kit command looks like an API key (not shown); pass the key with --api-key or SPECWRIGHT_API_KEY', 'Run "specwright kit --help" for usage.'] });
    const asDirectory = await cli(['kit', 'publish', key, '--url', registry.url, '--org', registry.orgId]);
    expect(asDirectory).toMatchObject({ code: 2, err: ['specwright: the kit directory looks like an API key (not shown); pass the key with --api-key or SPECWRIGHT_API_KEY', 'Run "specwright kit --help" for usage.'] });
    for (const result of [extra, asCommand, asDirectory]) expect([...result.out, ...result.err].join('\n')).not.toContain('aVerySecret');
    // Other arguments are still quoted back.
    expect((await cli(['kit', 'validate', dir, 'extra'])).err[0]).toBe('specwright: unexpected argument "extra"');
  });

  it('refuses a kit id the registry reserves, locally as the server does', async () => {
    const dir = await newKit('reserved-id');
    const manifest = JSON.parse(await readFile(join(dir, 'kit.json'), 'utf8'));
    manifest.metadata.id = 'executions';
    await writeFile(join(dir, 'kit.json'), JSON.stringify(manifest, null, 2));
    const result = await cli(['kit', 'validate', dir]);
    expect(result.code).toBe(1);
    expect(result.err.join('\n')).toMatch(/kit\.json(:\d+)?: metadata\.id: "executions" is reserved/);
    // init, naming the kit after its folder, steps around the reserved id.
    const credentials = join(work, 'credentials');
    expect((await cli(['kit', 'init', credentials])).code).toBe(0);
    expect(JSON.parse(await readFile(join(credentials, 'kit.json'), 'utf8')).metadata.id).toBe('credentials-kit');
    expect((await cli(['kit', 'validate', credentials])).code).toBe(0);
  });

  it('runs as the `specwright` bin: Node started with --no-node-snapshot, exit codes passed on, no stack traces', async () => {
    const bin = join(import.meta.dirname, 'bin.mjs');
    const dir = join(work, 'via-bin');
    const ok = await execFileAsync(process.execPath, [bin, 'kit', 'init', dir]);
    expect(ok.stdout).toContain('Kit "via-bin" is ready.');
    const tested = await execFileAsync(process.execPath, [bin, 'kit', 'test', dir]);
    expect(tested.stdout).toContain('via-bin@0.1.0: 1 example passed');
    const usage = await execFileAsync(process.execPath, [bin, 'kit', 'frobnicate', dir]).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(usage?.code).toBe(2);
    expect(usage?.stderr).toBe('specwright: unknown kit command "frobnicate" (init, validate, test or publish)\nRun "specwright kit --help" for usage.\n');
    // Output read by something that stops early (`| head -1`): the rest is dropped, the exit code kept.
    const piped = spawn(process.execPath, [bin, 'kit', 'test', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    piped.stdout.destroy();
    let stderr = '';
    piped.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const code = await new Promise((resolve) => piped.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});
