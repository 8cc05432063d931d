// Benchmark: bundling an execution's outputs (archiver with small entries deflated inline, plus the
// checksum manifest: kit-runtime's buildOutputBundle) against fflate.zipSync of the same files at the
// same level (9), in one run.
// Target: ≤ 1.5× the baseline.
//
//   node --no-node-snapshot bench/kit-bundle.ts
import { strToU8, zipSync } from 'fflate';
import { buildOutputBundle, type BundleOutput } from '../kit-runtime/index.ts';
import { atMost, interleavedMediansMs, report } from './measure.ts';

const outputs: BundleOutput[] = Array.from({ length: 100 }, (_, i) => ({
  outputId: `o${i}`,
  filename: `src/module-${i}/index.ts`,
  status: 'valid',
  content: `// module ${i}\n${'export const value = "lorem ipsum dolor sit amet";\n'.repeat(40 + (i % 20))}`,
}));

async function bundleWithRuntime() {
  return buildOutputBundle(outputs, { kitRef: 'bench@1.0.0' });
}

function bundleWithFflate() {
  const manifest = strToU8(JSON.stringify({ files: outputs.map((o) => ({ name: o.filename })) }, null, 2));
  const files: Record<string, Uint8Array> = { 'manifest.json': manifest };
  for (const output of outputs) files[output.filename] = strToU8(output.content);
  return zipSync(files, { level: 9 });
}

const { a: runtimeMs, b: fflateMs } = await interleavedMediansMs(40, bundleWithRuntime, bundleWithFflate);
await report('kit-bundle', [atMost('bundle vs fflate.zipSync', runtimeMs / fflateMs, 1.5)], { runtimeMs, fflateMs, outputs: outputs.length });
