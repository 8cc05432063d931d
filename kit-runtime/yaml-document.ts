import { isScalar, LineCounter, parseDocument, visit, YAMLParseError, type DocumentOptions, type ParseOptions, type SchemaOptions } from 'yaml';

/**
 * `parseDocument`, with duplicate map keys found in linear time. yaml's own check (`uniqueKeys`)
 * compares each key with every earlier key of its map: 40,000 keys, a 390 KB output, took 9 s on
 * the host thread, outside any kit's time limit. Here each map keeps a set of its keys' values, so
 * keys compare as yaml compares them (scalars by value: `1` and `"1"` differ; other keys by node)
 * and a duplicate is reported as yaml reports one, with its line and column.
 */
export function parseYamlDocument(source: string, options: ParseOptions & DocumentOptions & SchemaOptions = {}) {
  const lineCounter = new LineCounter();
  const document = parseDocument(source, { ...options, lineCounter, uniqueKeys: false });
  visit(document, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        // NaN never equals itself, so yaml lets two `.nan` keys stand; a set would not.
        if (!isScalar(key) || Number.isNaN(key.value)) continue;
        if (!seen.has(key.value)) {
          seen.add(key.value);
          continue;
        }
        const offset = key.range?.[0] ?? 0;
        const { line, col } = lineCounter.linePos(offset);
        document.errors.push(new YAMLParseError([offset, offset + 1], 'DUPLICATE_KEY', `Map keys must be unique (line ${line}, column ${col})`));
      }
    },
  });
  return document;
}
