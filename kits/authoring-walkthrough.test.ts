/**
 * Runs the walkthrough in kits/README.md exactly as written — every line of its `sh walkthrough`
 * block, through npx, in a fresh directory that has Specwright installed — against a loopback
 * server that implements the publish contract.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKitPublishServer, type KitPublishServer } from '../sdk/cli/test-support/kit-publish-server.ts';

const run = promisify(execFile);
const guide = await readFile(join(import.meta.dirname, 'README.md'), 'utf8');
const block = /```sh walkthrough\n([\s\S]*?)```/.exec(guide)?.[1];
const commands = (block ?? '').split('\n').filter((line) => line.trim() !== '');

let project: string;
let registry: KitPublishServer;
beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'specwright-walkthrough-'));
  // What `npm install specwright` gives a project: the bin in node_modules/.bin.
  await mkdir(join(project, 'node_modules/.bin'), { recursive: true });
  await symlink(join(import.meta.dirname, '../sdk/cli/bin.mjs'), join(project, 'node_modules/.bin/specwright'));
  registry = await startKitPublishServer();
});
afterAll(async () => {
  await registry.close();
  await rm(project, { recursive: true, force: true });
});

describe('kits/README.md walkthrough', () => {
  it('is four npx specwright commands, from init to publish', () => {
    expect(commands.map((c) => c.split(' ').slice(0, 4).join(' '))).toEqual([
      'npx specwright kit init',
      'npx specwright kit validate',
      'npx specwright kit test',
      'npx specwright kit publish',
    ]);
  });

  it('runs every command as written, each succeeding, ending with the published version', async () => {
    const env = {
      ...process.env,
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
      SPECWRIGHT_URL: registry.url,
      SPECWRIGHT_API_KEY: registry.apiKey,
      SPECWRIGHT_ORG: registry.orgId,
    };
    const outputs: string[] = [];
    for (const command of commands) {
      const { stdout } = await run('sh', ['-c', command], { cwd: project, env, timeout: 60_000 });
      outputs.push(stdout);
    }
    expect(outputs[0]).toContain('Kit "acme-summary" is ready.');
    expect(outputs[1]).toBe('acme-summary@0.1.0 is valid: 2 outputs, 4 files, phases CHECK PLAN VALIDATE\n');
    expect(outputs[2]).toContain('acme-summary@0.1.0: 1 example passed');
    expect(outputs[3]).toMatch(/^Published acme-summary@0\.1\.0 \(Acme Summary, id [0-9a-f-]{36}, active\)\n$/);
    const body = registry.received.at(-1)?.body as { manifest: { metadata: { id: string } }; files: Record<string, string> };
    expect(body.manifest.metadata.id).toBe('acme-summary');
    expect(Object.keys(body.files).sort()).toEqual(['hooks/plan.js', 'schemas/summary.schema.json', 'templates/readme.md.hbs', 'templates/summary.json.hbs']);
  });
});
