/**
 * The CLI's publish against the real service: `specwright kit publish` (in process) to a running
 * app, then the published kit is listed by the API. The loopback contract tests in sdk/cli cover
 * every error shape; this proves client and server agree on the wire.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../sdk/cli/specwright.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

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
  it('publishes a scaffolded kit, which the API then lists; the same version again is a CONFLICT; a wrong key is refused', async () => {
    const dir = join(work, 'e2e-summary');
    expect((await cli(['kit', 'init', dir])).code).toBe(0);
    const env = { SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: app.bootstrap.apiKey, SPECWRIGHT_ORG: app.bootstrap.organizationId };
    const published = await cli(['kit', 'publish', dir], env);
    expect(published.err).toEqual([]);
    expect(published.out).toEqual([expect.stringMatching(/^Published e2e-summary@0\.1\.0 \(E2e Summary, id [0-9a-f-]{36}, active\)$/)]);
    const listed = await call(app.url, `/api/${app.bootstrap.organizationId}/kits`, { apiKey: app.bootstrap.apiKey });
    expect(listed.body.data.kits.find((kit: { kitId: string }) => kit.kitId === 'e2e-summary')).toMatchObject({ version: '0.1.0', status: 'active' });

    const again = await cli(['kit', 'publish', dir], env);
    expect(again.code).toBe(1);
    expect(again.err.at(-1)).toMatch(/^specwright: publish failed: .+ \[CONFLICT 409\]$/);
    const wrongKey = await cli(['kit', 'publish', dir], { ...env, SPECWRIGHT_API_KEY: 'swk_nope_nope' });
    expect(wrongKey.err.at(-1)).toMatch(/^specwright: publish failed: .+ \[UNAUTHORIZED 401\]$/);
  });
});
