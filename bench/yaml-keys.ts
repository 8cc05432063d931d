// Benchmark: parsing a YAML output or pool with its duplicate keys checked (kit-runtime/yaml-document.ts,
// run on the host outside any kit's time limit) against parsing it with no key check at all, in one
// run. The document is the costly kind: one map of 40,000 keys (about 540 KB, under the 1 MiB output
// cap), on which yaml's own check (`uniqueKeys: true`, comparing each key with every earlier one)
// took seconds. Target: ≤ 1.5× the unchecked parse. yaml's own check is reported beside it.
//
//   node --no-node-snapshot bench/yaml-keys.ts
import { parseDocument } from 'yaml';
import { parseYamlDocument } from '../kit-runtime/yaml-document.ts';
import { atMost, interleavedMediansMs, medianMs, report } from './measure.ts';

const source = Array.from({ length: 40_000 }, (_, i) => `k${i}: ${i}`).join('\n');
const checked = () => parseYamlDocument(source, { prettyErrors: false });
const unchecked = () => parseDocument(source, { uniqueKeys: false, prettyErrors: false });
if (checked().errors.length > 0) throw new Error('the benchmark document must be valid');

const { a: checkedMs, b: uncheckedMs } = await interleavedMediansMs(9, checked, unchecked, 3);
const yamlsOwnCheckMs = await medianMs(1, () => parseDocument(source, { uniqueKeys: true, prettyErrors: false }));
await report('yaml-keys', [atMost('checked parse vs unchecked parse of the same document', checkedMs / uncheckedMs, 1.5)], {
  keys: 40_000,
  sourceBytes: source.length,
  checkedMs,
  uncheckedMs,
  yamlsOwnCheckMs,
});
