/**
 * The CLI's publish against the real service: `specwright kit publish` (in process) to a running
 * app, then the published kit is listed by the API. The loopback contract tests in sdk/cli cover
 * every error shape; this proves client and server agree on the wire, including where only the real
 * server shows it: a wrong key refused mid-upload, tRPC's own errors behind a wrong --url.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../sdk/cli/specwright.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const execFileAsync = promisify(execFile);
let app: TestApp;
let work: string;
beforeAll(async () => {
  app = await startTestApp();
  work = await mkdtemp(join(tmpdir(), 'specwright-publish-e2e-'));
});
afterAll(async () => {
  await app?.stop();
  await rm(work, { recursive: true, force: true });
});

async function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, env, { out: (l) => out.push(l), err: (l) => err.push(l), progress: () => {} });
  return { code, out, err };
}

describe('specwright kit publish against the service', () => {
  it('publishes a scaffolded kit, which the API then lists; another package under the same version is a CONFLICT; a wrong key is refused', async () => {
    const dir = join(work, 'e2e-summary');
    expect((await cli(['kit', 'init', dir])).code).toBe(0);
    const env = { SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: app.bootstrap.apiKey, SPECWRIGHT_ORG: app.bootstrap.organizationId };
    const published = await cli(['kit', 'publish', dir], env);
    expect(published.err).toEqual([]);
    expect(published.out).toEqual([expect.stringMatching(/^Published e2e-summary@0\.1\.0 \(E2e Summary, id [0-9a-f-]{36}, active\)$/)]);
    const listed = await call(app.url, `/api/${app.bootstrap.organizationId}/kits`, { apiKey: app.bootstrap.apiKey });
    expect(listed.body.data.kits.find((kit: { kitId: string }) => kit.kitId === 'e2e-summary')).toMatchObject({ version: '0.1.0', status: 'active' });

    const manifest = JSON.parse(await readFile(join(dir, 'kit.json'), 'utf8'));
    await writeFile(join(dir, 'kit.json'), JSON.stringify({ ...manifest, metadata: { ...manifest.metadata, description: 'Changed since 0.1.0 was published' } }, null, 2));
    const changed = await cli(['kit', 'publish', dir], env);
    expect(changed).toMatchObject({ code: 1, out: [] });
    expect(changed.err.at(-1)).toBe('specwright: publish failed: Kit e2e-summary version 0.1.0 is already published; versions are immutable — publish a new version [CONFLICT 409]');
    const wrongKey = await cli(['kit', 'publish', dir], { ...env, SPECWRIGHT_API_KEY: 'swk_nope_nope' });
    expect(wrongKey.err.at(-1)).toMatch(/^specwright: publish failed: .+ \[UNAUTHORIZED 401\]$/);
  });
});

describe('a publish retried after its answer was lost (exit code 3 says to try again)', () => {
  const env = () => ({ SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: app.bootstrap.apiKey, SPECWRIGHT_ORG: app.bootstrap.organizationId });

  it('succeeds (exit 0) when it finds this very package in place, saying that nothing changed', async () => {
    const dir = join(work, 'retried-summary');
    expect((await cli(['kit', 'init', dir])).code).toBe(0);
    const first = await cli(['kit', 'publish', dir], env());
    expect(first.code).toBe(0);
    const shown = /^Published (retried-summary@0\.1\.0 \(Retried Summary, id [0-9a-f-]{36}, active\))$/.exec(first.out[0] ?? '')?.[1];
    expect(shown, first.out.join('\n')).toBeDefined();
    const { createdAt } = (await call(app.url, `/api/${app.bootstrap.organizationId}/kits/retried-summary`, { apiKey: app.bootstrap.apiKey })).body.data.versions[0];

    const again = await cli(['kit', 'publish', dir], env());
    expect(again).toEqual({ code: 0, err: [], out: [`Already published: ${shown} is this very package, published ${createdAt}; nothing changed`] });
  });

  it('answers --json with ok true, alreadyPublished true and what the first publish answered; another package under that version fails (exit 1)', async () => {
    const dir = join(work, 'retried-json');
    expect((await cli(['kit', 'init', dir])).code).toBe(0);
    const first = await cli(['kit', 'publish', dir, '--json'], env());
    expect(first.code).toBe(0);
    const published = JSON.parse(first.out[0] as string);
    expect(published).toEqual({ ok: true, alreadyPublished: false, published: expect.objectContaining({ kitId: 'retried-json', version: '0.1.0' }) });

    const again = await cli(['kit', 'publish', dir, '--json'], env());
    expect(again.out).toHaveLength(1);
    expect({ code: again.code, value: JSON.parse(again.out[0] as string) }).toEqual({ code: 0, value: { ...published, alreadyPublished: true } });

    await writeFile(join(dir, 'templates/readme.md.hbs'), `${await readFile(join(dir, 'templates/readme.md.hbs'), 'utf8')}\nChanged since 0.1.0 was published.\n`);
    const changed = await cli(['kit', 'publish', dir, '--json'], env());
    expect({ code: changed.code, value: JSON.parse(changed.out[0] as string) }).toEqual({
      code: 1,
      value: { ok: false, error: { code: 'CONFLICT', status: 409, message: 'Kit retried-json version 0.1.0 is already published; versions are immutable — publish a new version' }, problems: [] },
    });
  });
});

describe('what publish sends and how it reads the answer', () => {
  it('sends a key read with a trailing carriage return (a CRLF .env file) trimmed, as the typed client does', async () => {
    const dir = join(work, 'crlf-key');
    expect((await cli(['kit', 'init', dir])).code).toBe(0);
    const env = { SPECWRIGHT_URL: app.url, SPECWRIGHT_ORG: app.bootstrap.organizationId };
    const published = await cli(['kit', 'publish', dir], { ...env, SPECWRIGHT_API_KEY: `${app.bootstrap.apiKey}\r\n` });
    expect(published).toMatchObject({ code: 0, err: [], out: [expect.stringMatching(/^Published crlf-key@0\.1\.0 /)] });
  });

  it('refuses a key with a control character inside, without showing it', async () => {
    const dir = join(work, 'bell-key');
    expect((await cli(['kit', 'init', dir])).code).toBe(0);
    const key = `${app.bootstrap.apiKey.slice(0, -4)}\u0007${app.bootstrap.apiKey.slice(-4)}`;
    const refused = await cli(['kit', 'publish', dir, '--url', app.url, '--api-key', key, '--org', app.bootstrap.organizationId]);
    expect(refused).toEqual({
      code: 1,
      out: [],
      err: ['specwright: publish failed: the API key contains a control or non-ASCII character, which no API key has (the key is not shown); check how it was copied'],
    });
  });

  it('says --url should be the base URL when it points at /trpc, whose errors carry numeric codes', async () => {
    const dir = join(work, 'trpc-url');
    expect((await cli(['kit', 'init', dir])).code).toBe(0);
    const result = await cli(['kit', 'publish', dir, '--url', `${app.url}/trpc`, '--api-key', app.bootstrap.apiKey, '--org', app.bootstrap.organizationId]);
    expect(result).toMatchObject({ code: 1, out: [] });
    expect(result.err.at(-1)).toBe(
      `specwright: publish failed: ${app.url} answered HTTP 404 with a body that is not a Specwright response; --url should be the service's base URL (https://host[:port], without /api or /trpc) [BAD_RESPONSE 404]`,
    );
  });
});

describe('publishing a large kit with a wrong key', () => {
  it('reports UNAUTHORIZED every time, though the server answers before it has read the body', async () => {
    const dir = join(work, 'large-refused');
    expect((await cli(['kit', 'init', dir])).code).toBe(0);
    const manifest = JSON.parse(await readFile(join(dir, 'kit.json'), 'utf8'));
    manifest.discovery.pools = ['pools/a.txt', 'pools/b.txt', 'pools/c.txt', 'pools/d.txt'];
    await writeFile(join(dir, 'kit.json'), JSON.stringify(manifest, null, 2));
    await mkdir(join(dir, 'pools'));
    for (const pool of manifest.discovery.pools) await writeFile(join(dir, pool), 'x'.repeat(2_000_000));
    const flags = ['--url', app.url, '--api-key', 'swk_bad_bad', '--org', app.bootstrap.organizationId];
    // As its own process, the way the race was seen: in this one, client and server would take turns.
    const bin = join(import.meta.dirname, '../../sdk/cli/bin.mjs');
    const results: string[] = [];
    for (let attempt = 0; attempt < 10; attempt++) {
      const failed = await execFileAsync(process.execPath, [bin, 'kit', 'publish', dir, ...flags]).then(() => null, (error: { code: number; stderr: string }) => error);
      results.push(`${failed?.code} ${failed?.stderr.trim().split('\n').at(-1)}`);
    }
    expect(results).toEqual(Array(10).fill('1 specwright: publish failed: The API key is not valid [UNAUTHORIZED 401]'));
  });
});
