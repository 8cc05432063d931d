import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpecwrightClient, errorCodeOf } from '../../sdk/index.ts';
import { sampleKit } from '../helpers/kit-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
});
afterAll(() => app?.stop());

describe('the typed client', () => {
  it('calls procedures over /trpc with an API key and gets typed data back', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const me = await client.me.get.query();
    expect(me.tenantId).toBe(app.bootstrap.tenantId);
    const created = await client.apiKeys.create.mutate({ name: 'from the sdk' });
    expect(created.key).toMatch(/^swk_/);
  });

  it('surfaces catalog error codes', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const failure = await client.apiKeys.revoke.mutate({ keyId: '00000000-0000-4000-8000-000000000000' }).catch((error) => error);
    expect(errorCodeOf(failure)).toBe('NOT_FOUND');
    const anonymous = createSpecwrightClient({ url: app.url });
    expect(errorCodeOf(await anonymous.me.get.query().catch((error) => error))).toBe('UNAUTHORIZED');
    const invalid = await client.apiKeys.create.mutate({ name: '' }).catch((error) => error);
    expect(errorCodeOf(invalid)).toBe('VALIDATION_ERROR');
    expect(invalid.data.details.issues[0].field).toBe('name');
  });

  it('splits many concurrent calls into batches the server reads whole', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const project = await client.projects.create.mutate({ name: 'Read by many' });
    // One batch of 300 GETs would carry a URL past the server's 16 KiB header limit (431, no body).
    const reads = await Promise.all(Array.from({ length: 300 }, () => client.projects.get.query({ projectId: project.id })));
    expect(reads.every((read) => read.id === project.id)).toBe(true);
  });

  it('publishes a kit above the 1 MiB JSON limit, up to UPLOAD_LIMIT_BYTES, as REST does', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const kit = sampleKit({ id: 'large-over-trpc' });
    kit.files['docs/notes.md'] = 'x'.repeat(1_500_000);
    const published = await client.kits.publish.mutate({ orgId: app.bootstrap.organizationId, ...kit } as never);
    expect(published.kitId).toBe('large-over-trpc');
    // Only an authenticated caller gets the larger limit.
    const anonymous = createSpecwrightClient({ url: app.url });
    expect(errorCodeOf(await anonymous.kits.publish.mutate({ orgId: app.bootstrap.organizationId, ...kit } as never).catch((error) => error))).toBe('UNAUTHORIZED');
  });

  it('sends a publish on its own even when other calls go out in the same tick, so each keeps its limit', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const large = (id: string) => {
      const kit = sampleKit({ id });
      kit.files['docs/notes.md'] = 'x'.repeat(1_200_000);
      return client.kits.publish.mutate({ orgId: app.bootstrap.organizationId, ...kit } as never);
    };
    const [first, second, key] = await Promise.all([large('large-together-1'), large('large-together-2'), client.apiKeys.create.mutate({ name: 'beside a publish' })]);
    expect([first.kitId, second.kitId]).toEqual(['large-together-1', 'large-together-2']);
    expect(key.key).toMatch(/^swk_/);
  });

  it('sends mutations one per request, so calls that each fit the JSON limit never fail together', async () => {
    const client = createSpecwrightClient({ url: app.url, apiKey: app.bootstrap.apiKey });
    const orgId = app.bootstrap.organizationId;
    await client.kits.publish.mutate({ orgId, ...sampleKit({ id: 'large-inputs' }) } as never);
    const project = await client.projects.create.mutate({ name: 'Large inputs' });
    // ~310 KB each (within the inputs' own bounds: 64 KiB of profile, 256 KiB of answers), well
    // under the server's 1 MiB JSON limit; four in one body would be 1.24 MB.
    const execute = (n: number) =>
      client.kitExecutions.execute.mutate({
        orgId,
        kitId: 'large-inputs',
        projectId: project.id,
        businessProfile: { company: { name: 'Acme', industry: 'aerospace' }, history: 'y'.repeat(60_000) },
        discoveryAnswers: { entities: ['Rocket'], notes: `${n}`.padEnd(250_000, 'x') },
        options: { dryRun: true, skipApply: false },
      });
    const started = await Promise.all([1, 2, 3, 4].map(execute));
    expect(started.map((execution) => execution.status)).toEqual(['pending', 'pending', 'pending', 'pending']);
  });

  it('rejects wrong inputs and unknown procedures at compile time, and infers outputs', async () => {
    // Every @ts-expect-error in the file must be an error, or tsc fails on the unused directive.
    // The exit code catches a tsc that never checked anything (it crashed, out of memory, with nothing on stdout).
    const result = await promisify(execFile)('npx', ['tsc', '--noEmit', '-p', 'sdk/type-tests/tsconfig.json'], { cwd: process.cwd() }).then((done) => ({ ...done, code: 0 }), (error) => error);
    expect(result.stdout).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);
});
