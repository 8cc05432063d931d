import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { strFromU8, unzipSync } from 'fflate';
import { buildOutputBundle, BundleError } from './bundle.ts';
import { createKitRuntime } from './kit-runtime.ts';
import { exampleInput, exampleKit } from './test-support/kits.ts';

const runtime = createKitRuntime();
afterAll(() => runtime.close());
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('buildOutputBundle', () => {
  it('zips the valid outputs of an execution with a checksummed manifest.json', async () => {
    const result = await runtime.execute(exampleKit(), { tenantId: 't', input: exampleInput });
    const withInvalid = [...result.outputs, { outputId: 'broken', filename: 'broken.json', content: '{', status: 'invalid' as const }];
    const bundle = await buildOutputBundle(withInvalid, { kitRef: result.kitRef, executionId: 'exec-1' });

    const files = unzipSync(new Uint8Array(bundle.buffer));
    expect(Object.keys(files).sort()).toEqual(['README.md', 'deploy/docker-compose.yml', 'manifest.json', 'openapi.json']);
    for (const output of result.outputs) expect(strFromU8(files[output.filename]!)).toBe(output.content);

    const manifest = JSON.parse(strFromU8(files['manifest.json']!));
    expect(manifest).toMatchObject({ format: 'specwright-bundle/1', kitRef: 'service-starter@1.2.0', executionId: 'exec-1' });
    expect(manifest.files).toEqual(result.outputs.map((o) => ({ name: o.filename, sizeBytes: o.contentSizeBytes, sha256: sha256(o.content), outputId: o.outputId })));
    expect(bundle.entries).toEqual(manifest.files);
    expect(bundle.sizeBytes).toBe(bundle.buffer.length);
    expect(bundle.sha256).toBe(createHash('sha256').update(bundle.buffer).digest('hex'));
  });

  it('is byte-for-byte reproducible', async () => {
    const outputs = [{ outputId: 'a', filename: 'a.txt', content: 'hello', status: 'valid' as const }];
    expect((await buildOutputBundle(outputs)).sha256).toBe((await buildOutputBundle(outputs)).sha256);
  });

  it.each(['../evil.sh', 'a/../../evil.sh', '..\\evil.bat', '/etc/cron.d/evil', 'evil\u0000.txt'])(
    'refuses to write the entry %j, which archiver would keep',
    async (filename) => {
      await expect(buildOutputBundle([{ outputId: 'x', filename, content: 'x', status: 'valid' }])).rejects.toThrow(BundleError);
    },
  );

  it('refuses duplicate names and a second manifest.json', async () => {
    await expect(
      buildOutputBundle([
        { outputId: 'a', filename: 'a.txt', content: '1', status: 'valid' },
        { outputId: 'b', filename: './a.txt', content: '2', status: 'warning' },
      ]),
    ).rejects.toThrow('two bundle entries would be named "a.txt"');
    await expect(buildOutputBundle([{ outputId: 'm', filename: 'manifest.json', content: '{}', status: 'valid' }])).rejects.toThrow(BundleError);
  });
});
