/**
 * `specwright kit … --json` and the exit codes, as a program that writes kits in bulk (a "kit
 * factory") reads them: one JSON object on stdout whatever the outcome, exit codes that tell a bad
 * kit (1) from a bad command (2) from a server that could not take the request now (3).
 */
import { mkdir, mkdtemp, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kitIdFromDirectory, runKitForTest } from '../kit/index.ts';
import { cliInProcess } from './test-support/cli-in-process.ts';
import { startKitPublishServer, type KitPublishServer } from './test-support/kit-publish-server.ts';

let work: string;
let registry: KitPublishServer;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'specwright-json-'));
  registry = await startKitPublishServer();
});
afterAll(async () => {
  await registry.close();
  await rm(work, { recursive: true, force: true });
});

const cli = cliInProcess;

/** The one JSON line --json prints; fails when stdout holds anything else. */
async function json(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = await cli([...args, '--json'], env);
  expect(result.out, 'stdout is exactly one line').toHaveLength(1);
  return { code: result.code, value: JSON.parse(result.out[0] as string), err: result.err };
}

async function newKit(name: string): Promise<string> {
  const dir = join(work, name);
  expect((await cli(['kit', 'init', dir])).code).toBe(0);
  return dir;
}

describe('--json: one JSON object on stdout, whatever the outcome', () => {
  it('init, validate and test answer in JSON, problems as {file, line?, message}, and print nothing else', async () => {
    const dir = join(work, 'factory-kit');
    const init = await json(['kit', 'init', dir]);
    expect(init).toMatchObject({ code: 0, err: [], value: { ok: true, kitId: 'factory-kit', dir } });
    expect(init.value.files).toContain('kit.json');
    expect(await json(['kit', 'validate', dir])).toMatchObject({ code: 0, err: [], value: { ok: true, kitRef: 'factory-kit@0.1.0', outputs: 2, problems: [] } });
    const passed = await json(['kit', 'test', dir]);
    expect(passed).toMatchObject({ code: 0, err: [], value: { ok: true, kitRef: 'factory-kit@0.1.0', problems: [], runs: [{ example: 'acme', status: 'completed' }] } });

    await writeFile(join(dir, 'hooks/plan.js'), 'function plan(context) {\n  return {\n}\n');
    const invalid = await json(['kit', 'validate', dir]);
    expect(invalid).toMatchObject({ code: 1, err: [], value: { ok: false, kitRef: 'factory-kit@0.1.0' } });
    expect(invalid.value.problems).toEqual([{ file: 'hooks/plan.js', line: 4, message: expect.stringMatching(/^hook is not valid JavaScript/) }]);
    expect(await json(['kit', 'test', dir])).toMatchObject({ code: 1, err: [], value: { ok: false, loaded: false, runs: [], problems: [{ file: 'hooks/plan.js', line: 4 }] } });

    expect(await json(['kit', 'init', dir])).toMatchObject({ code: 1, err: [], value: { ok: false, error: { code: 'SCAFFOLD', message: `${dir} is not empty; pick a new directory` } } });
  });

  it('answers a usage error in JSON too (exit code 2), with the text on stderr', async () => {
    const usage = await json(['kit', 'publish', join(work, 'x')]);
    expect(usage.code).toBe(2);
    expect(usage.value).toEqual({ ok: false, error: { code: 'USAGE', message: 'publish needs --url (or SPECWRIGHT_URL), --api-key (or SPECWRIGHT_API_KEY), --org (or SPECWRIGHT_ORG)' } });
    expect((await json(['kit', 'validate', 'x', '--bogus'])).value.error.code).toBe('USAGE');
  });

  it('publishes in JSON, and tells a server that could not be reached (exit 3) from a refused kit (exit 1), never showing the key', async () => {
    const dir = await newKit('factory-publish');
    const flags = ['--url', registry.url, '--api-key', registry.apiKey, '--org', registry.orgId];
    const published = await json(['kit', 'publish', dir, ...flags]);
    expect(published).toMatchObject({ code: 0, err: [], value: { ok: true, alreadyPublished: false, published: { kitId: 'factory-publish', version: '0.1.0' } } });
    // The very package again (a retry after a lost answer) is in place: a success.
    const again = await json(['kit', 'publish', dir, ...flags]);
    expect(again).toEqual({ code: 0, err: [], value: { ...published.value, alreadyPublished: true } });

    await writeFile(join(dir, 'templates/readme.md.hbs'), 'Changed since 0.1.0 was published\n');
    const conflict = await json(['kit', 'publish', dir, ...flags]);
    expect(conflict).toMatchObject({ code: 1, value: { ok: false, error: { code: 'CONFLICT', status: 409 } } });

    const key = 'swk_do_not_print_me';
    const unreachable = await json(['kit', 'publish', dir, '--url', 'http://127.0.0.1:9', '--org', registry.orgId], { SPECWRIGHT_API_KEY: key });
    expect(unreachable).toMatchObject({ code: 3, err: [], value: { ok: false, error: { code: 'UNREACHABLE', status: null }, problems: [] } });
    expect(JSON.stringify(unreachable)).not.toContain(key);
    // The same, as text: exit code 3 as well.
    const text = await cli(['kit', 'publish', dir, '--url', 'http://127.0.0.1:9', '--org', registry.orgId], { SPECWRIGHT_API_KEY: key });
    expect(text.code).toBe(3);
    expect(text.err.join('\n')).not.toContain(key);

    registry.forcedProblems = [{ file: 'templates/readme.md.hbs', line: 3, message: 'uses a helper the server does not know' }];
    try {
      const refused = await json(['kit', 'publish', dir, ...flags]);
      expect(refused).toMatchObject({ code: 1, value: { ok: false, error: { code: 'VALIDATION_ERROR', status: 400 }, problems: [{ file: 'templates/readme.md.hbs', line: 3 }] } });
    } finally {
      registry.forcedProblems = null;
    }
  });
});

describe('options are taken only by the commands they belong to', () => {
  it('refuses an option the command does not take (exit code 2) instead of ignoring it', async () => {
    const dir = await newKit('stray-options');
    for (const [args, message] of [
      [['kit', 'validate', dir, '--id', 'other'], '--id is not an option of "kit validate"'],
      [['kit', 'test', dir, '--url', 'https://specs.example.com'], '--url is not an option of "kit test"'],
      [['kit', 'init', join(work, 'never-made'), '--kits', work], '--kits is not an option of "kit init"'],
      [['kit', 'publish', dir, '--id', 'other'], '--id is not an option of "kit publish"'],
    ] as const) {
      expect(await cli([...args]), message).toEqual({ code: 2, out: [], err: [`specwright: ${message}`, 'Run "specwright kit --help" for usage.'] });
    }
    await expect(readFile(join(work, 'never-made', 'kit.json'))).rejects.toThrow(/ENOENT/);
  });
});

describe('kit init with awkward directory names', () => {
  it('takes the id from a name with accents as the scaffold\'s own slug does, and prints a Next: line a shell reads back', async () => {
    expect(kitIdFromDirectory('/tmp/Größe Ding')).toBe('grosse-ding');
    expect(kitIdFromDirectory('/tmp/Crème Brûlée')).toBe('creme-brulee');
    // Letters NFD leaves whole are spelled out, not dropped (`Ærø` was `r`).
    expect(kitIdFromDirectory('/tmp/Ærø Łódź')).toBe('aero-lodz');
    expect(kitIdFromDirectory('/tmp/日本')).toBe('my-kit');
    expect(kitIdFromDirectory('/tmp/credentials')).toBe('credentials-kit');

    const dir = join(work, "Größe Ding's kit");
    const init = await cli(['kit', 'init', dir]);
    expect(init.code).toBe(0);
    const quoted = `'${dir.replace("'", "'\\''")}'`;
    expect(init.out.at(-1)).toBe(`Kit "grosse-ding-s-kit" is ready. Next: specwright kit validate ${quoted} && specwright kit test ${quoted}`);
  });
});

describe('kit test examples', () => {
  it('refuses an example too large to be a run input without reading it, and names an examples path that is not a folder', async () => {
    const dir = await newKit('huge-example');
    // Sparse: 32 MiB on paper, nothing on disk.
    await writeFile(join(dir, 'examples/huge.json'), '');
    await truncate(join(dir, 'examples/huge.json'), 32 * 1024 * 1024);
    const huge = await cli(['kit', 'test', dir]);
    expect(huge.code).toBe(1);
    expect(huge.out[0]).toBe('examples/huge.json: file is larger than 16777216 bytes');

    const flat = await newKit('examples-is-a-file');
    await rm(join(flat, 'examples'), { recursive: true });
    await writeFile(join(flat, 'examples'), '{}');
    const result = await cli(['kit', 'test', flat]);
    expect(result.code).toBe(1);
    expect(result.out[0]).toMatch(/^examples: cannot be read as a folder: ENOTDIR/);
  });
});

describe('publish uploads only what the manifest references, from inside the kit', () => {
  it('leaves .git, node_modules and hidden files behind, and refuses a referenced file that is a symlink to a secret outside', async () => {
    const dir = await newKit('crowded-folder');
    await mkdir(join(dir, '.git'));
    await writeFile(join(dir, '.git/config'), '[remote "origin"]\n\turl = https://token@example.com/x.git\n');
    await mkdir(join(dir, 'node_modules/x'), { recursive: true });
    await writeFile(join(dir, 'node_modules/x/index.js'), 'module.exports = 1;\n');
    await writeFile(join(dir, '.env'), 'SPECWRIGHT_API_KEY=swk_secret\n');
    // CRLF and a byte order mark in a referenced template: uploaded as text, the mark dropped.
    await writeFile(join(dir, 'templates/readme.md.hbs'), '\ufeff# {{businessProfile.company.name}}\r\n');
    const flags = ['--url', registry.url, '--api-key', registry.apiKey, '--org', registry.orgId];
    expect((await cli(['kit', 'publish', dir, ...flags])).code).toBe(0);
    const body = registry.received.at(-1)?.body as { files: Record<string, string> };
    expect(Object.keys(body.files).sort()).toEqual(['hooks/plan.js', 'schemas/summary.schema.json', 'templates/readme.md.hbs', 'templates/summary.json.hbs']);
    expect(body.files['templates/readme.md.hbs']).toBe('# {{businessProfile.company.name}}\r\n');

    const secret = join(work, 'secret.txt');
    await writeFile(secret, 'the secret');
    await rm(join(dir, 'templates/readme.md.hbs'));
    await symlink(secret, join(dir, 'templates/readme.md.hbs'));
    const sent = registry.received.length;
    const refused = await json(['kit', 'publish', dir, ...flags]);
    expect(refused).toMatchObject({ code: 1, value: { ok: false, error: { code: 'LOCAL' }, problems: [{ file: 'templates/readme.md.hbs', message: 'resolves outside the kit directory' }] } });
    expect(registry.received.length).toBe(sent);
  });
});

describe('runKitForTest', () => {
  it('parses only json and yaml outputs, and names the output whose content does not parse', async () => {
    const dir = await newKit('parsed-outputs');
    const input = JSON.parse(await readFile(join(dir, 'examples/acme.json'), 'utf8'));
    const result = await runKitForTest(dir, input);
    expect(result.ok).toBe(true);
    expect(result.parsed('summary')).toMatchObject({ company: 'Acme Rockets' });
    expect(() => result.parsed('readme')).toThrow('output "readme" is markdown, not json or yaml; read its content instead');

    await writeFile(join(dir, 'templates/summary.json.hbs'), '{ "company": {{json businessProfile.company.name}},\n');
    const broken = await runKitForTest(dir, input);
    expect(broken.ok).toBe(false);
    expect(() => broken.parsed('summary')).toThrow(/^output "summary" \(summary\.json, invalid\) is not valid json: /);
  });
});
