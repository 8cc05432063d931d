/**
 * A bundle is a ZIP of an execution's usable outputs plus `manifest.json` listing each file with
 * its size and sha256. archiver keeps `../` inside entry names, so every name goes through the
 * safe-path gate and the bundle's name rules (BundleNames) here, even though rendering applied
 * both: a bundle may be built from stored rows long after the run, under older rules.
 */
import { createHash } from 'node:crypto';
import { BUNDLE_MANIFEST_NAME, newBundleNames } from './kit-package.ts';
import { safeKitPath } from './safe-path.ts';
import { BundleZipArchive } from './zip-archive.ts';

export type BundleOutput = { filename: string; content: string; status: 'valid' | 'warning' | 'invalid'; outputId?: string };
export type BundleEntry = { name: string; sizeBytes: number; sha256: string; outputId: string | null };
export type OutputBundle = { buffer: Buffer; sizeBytes: number; sha256: string; entries: BundleEntry[]; leftOut: LeftOutOutput[] };
export type BundleInfo = {
  kitRef?: string;
  executionId?: string;
  createdAt?: Date;
  /**
   * Leave out (and list in `leftOut`) an output whose name the bundle cannot hold, instead of
   * failing with BundleError: for a caller that must end with a bundle, such as a job that would
   * otherwise fail the same way on every retry.
   */
  leaveOutUnbundleable?: boolean;
  /** What the manifest says the bundle is, in place of a kit run's `format`, `kitRef` and `executionId` (an export pack's). */
  describedAs?: Record<string, unknown>;
};
/** An output a bundle built with `leaveOutUnbundleable` does not hold, and why. */
export type LeftOutOutput = { outputId: string | null; filename: string; reason: string };

export class BundleError extends Error {
  override name = 'BundleError';
}

// A fixed timestamp keeps the archive byte-for-byte reproducible for the same outputs.
const ENTRY_DATE = new Date('2000-01-01T00:00:00Z');

/** Bundles outputs whose status is valid or warning; invalid ones are left out. */
export async function buildOutputBundle(outputs: readonly BundleOutput[], info: BundleInfo = {}): Promise<OutputBundle> {
  const files: Array<{ entry: BundleEntry; data: Buffer }> = [];
  const leftOut: LeftOutOutput[] = [];
  const names = newBundleNames();
  for (const output of outputs) {
    if (output.status === 'invalid') continue;
    const owner = output.outputId === undefined ? '(unnamed)' : `output "${output.outputId}"`;
    let name: string;
    let problem: string | null;
    try {
      name = safeKitPath(output.filename);
      problem = names.problem(name);
    } catch (error) {
      name = output.filename;
      problem = (error as Error).message;
    }
    if (problem !== null) {
      if (!info.leaveOutUnbundleable) throw new BundleError(`cannot bundle ${owner}: ${problem}`);
      leftOut.push({ outputId: output.outputId ?? null, filename: output.filename, reason: problem });
      continue;
    }
    names.add(name, owner);
    const data = Buffer.from(output.content, 'utf8');
    files.push({ entry: { name, sizeBytes: data.length, sha256: sha256(data), outputId: output.outputId ?? null }, data });
  }
  const entries = files.map((f) => f.entry);
  const manifest = Buffer.from(
    `${JSON.stringify(
      {
        ...(info.describedAs ?? { format: 'specwright-bundle/1', kitRef: info.kitRef ?? null, executionId: info.executionId ?? null }),
        createdAt: (info.createdAt ?? ENTRY_DATE).toISOString(),
        // An export pack's files come from no kit output: they carry no outputId.
        files: info.describedAs ? entries.map(({ outputId: _outputId, ...entry }) => entry) : entries,
      },
      null,
      2,
    )}\n`,
  );

  const archive = new BundleZipArchive({ zlib: { level: 9 } });
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
  return { buffer, sizeBytes: buffer.length, sha256: sha256(buffer), entries, leftOut };
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
