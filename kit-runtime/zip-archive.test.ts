import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { Archiver, ZipArchive } from 'archiver';
import { BundleZipArchive, INLINE_DEFLATE_LIMIT } from './zip-archive.ts';

const text = (size: number) => Buffer.from('export const value = "lorem ipsum dolor sit amet";\n'.repeat(Math.ceil(size / 50)).slice(0, size));

// Empty, small, at the inline limit, just past it, large; text and incompressible data.
const entries: Array<[string, Buffer]> = [
  ['empty.txt', Buffer.alloc(0)],
  ['small.ts', text(700)],
  ['at-limit.ts', text(INLINE_DEFLATE_LIMIT)],
  ['past-limit.ts', text(INLINE_DEFLATE_LIMIT + 1)],
  ['large.ts', text(300_000)],
  ['random.bin', randomBytes(5000)],
  ['dir/ünïcode name.md', text(1234)],
];

async function zip(archive: Archiver): Promise<Buffer> {
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    archive.on('end', () => resolve());
    archive.on('error', reject);
  });
  for (const [name, data] of entries) archive.append(data, { name, date: new Date('2000-01-01T00:00:00Z') });
  await archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

describe('BundleZipArchive', () => {
  it.each([1, 6, 9])('writes the same bytes as archiver’s ZipArchive at level %i', async (level) => {
    const ours = await zip(new BundleZipArchive({ zlib: { level } }));
    const stock = await zip(new ZipArchive({ zlib: { level } }));
    expect(ours.equals(stock)).toBe(true);
  });

  it('writes entries that another reader unpacks to the original bytes', async () => {
    const files = unzipSync(new Uint8Array(await zip(new BundleZipArchive({ zlib: { level: 9 } }))));
    expect(Object.keys(files)).toEqual(entries.map(([name]) => name));
    for (const [name, data] of entries) expect(Buffer.from(files[name]!).equals(data)).toBe(true);
  });
});
