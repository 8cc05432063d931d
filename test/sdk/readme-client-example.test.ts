import { execFile } from 'node:child_process';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { scratchDir } from '../helpers/scratch-dir.ts';

/**
 * The README's typed-client example, as a developer copies it: a file beside `sdk/` in a project of
 * `"type": "module"`, type-checked under the project's settings and run with Node against the service.
 */
let app: TestApp;
let dir: string;
const run = promisify(execFile);

beforeAll(async () => {
  app = await startTestApp();
  const readme = await readFile('README.md', 'utf8');
  const example = /With the typed client[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!example) throw new Error('README.md has no typed-client example');
  dir = await scratchDir('readme-example');
  for (const linked of ['sdk', 'control-plane', 'kit-runtime', 'node_modules']) await symlink(join(process.cwd(), linked), join(dir, linked));
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ extends: join(process.cwd(), 'tsconfig.json'), include: ['example.ts'] }));
  // The service the README starts listens on port 3000; this one on its own port. The last line shows what came back.
  const pointed = example.replace("'http://127.0.0.1:3000'", JSON.stringify(app.url));
  expect(pointed).not.toBe(example);
  await writeFile(join(dir, 'example.ts'), `${pointed}console.log(JSON.stringify({ me, key }));\n`);
});
afterAll(() => app?.stop());

describe("the README's typed-client example", () => {
  it('type-checks as written', async () => {
    // A failed run rejects with its exit code and tsc's findings on stdout; the exit code also catches a tsc that never ran.
    const result = await run('npx', ['tsc', '--noEmit', '-p', join(dir, 'tsconfig.json')], { cwd: process.cwd() }).then((done) => ({ ...done, code: 0 }), (error) => error);
    expect(result.stdout).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);

  it('runs as written: the caller, then a new key shown once', async () => {
    const { stdout } = await run(process.execPath, ['example.ts'], { cwd: dir, env: { ...process.env, SPECWRIGHT_API_KEY: app.bootstrap.apiKey } });
    const { me, key } = JSON.parse(stdout);
    expect(me).toMatchObject({ userId: app.bootstrap.userId, tenantId: app.bootstrap.tenantId, authenticatedBy: 'api_key' });
    expect(key).toMatchObject({ name: 'ci', key: expect.stringMatching(/^swk_/), revokedAt: null });
  }, 60_000);
});
