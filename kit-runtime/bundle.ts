/**
 * A bundle is a ZIP of an execution's usable outputs plus `manifest.json` listing each file with
 * its size and sha256. archiver keeps `../` inside entry names, so every name goes through the
 * safe-path gate here, even though outputs were normalised when rendered: a bundle may be built
 * from stored rows long after the run.
 */
import { createHash } from 'node:crypto';
import { ZipArchive } from 'archiver';
import { BUNDLE_MANIFEST_NAME } from './kit-package.ts';
import { safeKitPath } from './safe-path.ts';

export type BundleOutput = { filename: string; content: string; status: 'valid' | 'warning' | 'invalid'; outputId?: string };
export type BundleEntry = { name: string; sizeBytes: number; sha256: string; outputId: string | null };
export type OutputBundle = { buffer: Buffer; sizeBytes: number; sha256: string; entries: BundleEntry[] };
export type BundleInfo = { kitRef?: string; executionId?: string; createdAt?: Date };

export class BundleError extends Error {
  override name = 'BundleError';
}

// A fixed timestamp keeps the archive byte-for-byte reproducible for the same outputs.
const ENTRY_DATE = new Date('2000-01-01T00:00:00Z');

/** Bundles outputs whose status is valid or warning; invalid ones are left out. */
export async function buildOutputBundle(outputs: readonly BundleOutput[], info: BundleInfo = {}): Promise<OutputBundle> {
  const files: Array<{ entry: BundleEntry; data: Buffer }> = [];
  const names = new Set<string>([BUNDLE_MANIFEST_NAME]);
  for (const output of outputs) {
    if (output.status === 'invalid') continue;
    let name: string;
    try {
      name = safeKitPath(output.filename);
    } catch (error) {
      throw new BundleError(`cannot bundle output ${output.outputId ?? '(unnamed)'}: ${(error as Error).message}`);
    }
    if (names.has(name)) throw new BundleError(`two bundle entries would be named "${name}"`);
    names.add(name);
    const data = Buffer.from(output.content, 'utf8');
    files.push({ entry: { name, sizeBytes: data.length, sha256: sha256(data), outputId: output.outputId ?? null }, data });
  }
  const entries = files.map((f) => f.entry);
  const manifest = Buffer.from(
    `${JSON.stringify(
      {
        format: 'specwright-bundle/1',
        kitRef: info.kitRef ?? null,
        executionId: info.executionId ?? null,
        createdAt: (info.createdAt ?? ENTRY_DATE).toISOString(),
        files: entries,
      },
      null,
      2,
    )}\n`,
  );

  const archive = new ZipArchive({ zlib: { level: 9 } });
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: Buffer) => chunks.push(chunk));
  const finished = new Promise<void>((resolve, reject) => {
    archive.on('end', () => resolve());
    archive.on('error', reject);
    archive.on('warning', reject);
  });
  archive.append(manifest, { name: BUNDLE_MANIFEST_NAME, date: ENTRY_DATE });
  for (const { entry, data } of files) archive.append(data, { name: entry.name, date: ENTRY_DATE });
  await archive.finalize();
  await finished;
  const buffer = Buffer.concat(chunks);
  return { buffer, sizeBytes: buffer.length, sha256: sha256(buffer), entries };
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
