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
    ).rejects.toThrow('cannot bundle output "b": filename "a.txt" is already used by output "a"');
    await expect(buildOutputBundle([{ outputId: 'm', filename: 'manifest.json', content: '{}', status: 'valid' }])).rejects.toThrow(BundleError);
  });

  // Stored rows may predate these rules: every entry of a bundle must unpack beside the others.
  it.each([
    ['A.md', 'a.md', 'differs only in letter case from "A.md"'],
    ['docs', 'docs/x.md', 'needs a directory "docs"'],
    ['docs/x.md', 'docs', 'is a directory of "docs/x.md"'],
    ['x.md', 'MANIFEST.JSON', 'differs only in letter case from "manifest.json", reserved for the bundle manifest'],
  ])('refuses %j beside %j, or leaves the later one out when asked to', async (first, second, reason) => {
    const outputs = [
      { outputId: 'a', filename: first, content: '1', status: 'valid' as const },
      { outputId: 'b', filename: second, content: '2', status: 'valid' as const },
    ];
    await expect(buildOutputBundle(outputs)).rejects.toThrow(reason);
    const bundle = await buildOutputBundle(outputs, { leaveOutUnbundleable: true });
    expect(bundle.leftOut).toEqual([{ outputId: 'b', filename: second, reason: expect.stringContaining(reason) }]);
    expect(Object.keys(unzipSync(new Uint8Array(bundle.buffer))).sort()).toEqual([first, 'manifest.json'].sort());
    expect(bundle.entries.map((e) => e.outputId)).toEqual(['a']);
  });

  it('leaves out an output whose stored name is unsafe when asked to', async () => {
    const bundle = await buildOutputBundle(
      [
        { outputId: 'a', filename: '../evil.sh', content: '1', status: 'valid' },
        { outputId: 'b', filename: 'ok.md', content: '2', status: 'valid' },
      ],
      { leaveOutUnbundleable: true },
    );
    expect(bundle.leftOut).toEqual([{ outputId: 'a', filename: '../evil.sh', reason: 'unsafe path "../evil.sh": must not contain ".." segments' }]);
    expect(bundle.entries.map((e) => e.name)).toEqual(['ok.md']);
  });
});
