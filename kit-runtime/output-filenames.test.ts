import { afterAll, describe, expect, it } from 'vitest';
import { createKitRuntime } from './kit-runtime.ts';
import { loadOrThrow } from './test-support/kits.ts';

/**
 * Rendered filenames become ZIP entries that must unpack side by side on any file system, and
 * rows that storage keeps as sent. Two outputs take their names from a PLAN hook; the second is
 * refused when its name would clash with the first's, and the run goes on with it invalid.
 */
const runtime = createKitRuntime({ limits: { timeoutMs: 3000 } });
afterAll(() => runtime.close());

function twoNamesKit() {
  return loadOrThrow(
    {
      metadata: { id: 'two-names', displayName: 'Two names', version: '1.0.0', description: '', author: 'test', kitType: 'file' },
      platform: { name: 'none', category: 'test' },
      phases: ['PLAN'],
      outputs: [
        { id: 'first', filename: '{{@plan.a}}', template: 't/out.hbs', outputType: 'text' },
        { id: 'second', filename: '{{@plan.b}}', template: 't/out.hbs', outputType: 'text' },
      ],
      discovery: { pools: [] },
      hooks: { PLAN: 'h/plan.js' },
    },
    { 't/out.hbs': 'hello\n', 'h/plan.js': 'function plan(context) { return { data: context.input.names }; }' },
  );
}

const run = (a: string, b: string) => runtime.execute(twoNamesKit(), { tenantId: 't', input: { names: { a, b } } });

describe('rendered filenames', () => {
  it('refuses names with unpaired surrogates, which storage would turn into one name', async () => {
    const result = await run('x\uD800.md', 'x\uDC00.md');
    expect(result.outputs.map((o) => [o.filename, o.status, o.validationErrors])).toEqual([
      ['', 'invalid', ['filename "x\\ud800.md" is unsafe: must not contain unpaired UTF-16 surrogates']],
      ['', 'invalid', ['filename "x\\udc00.md" is unsafe: must not contain unpaired UTF-16 surrogates']],
    ]);
    expect(result.status).toBe('failed');
  });

  it.each([
    ['A.md', 'a.md', 'filename "a.md" differs only in letter case from "A.md", used by output "first"'],
    ['docs/Guide.md', 'DOCS/guide.md', 'filename "DOCS/guide.md" differs only in letter case from "docs/Guide.md", used by output "first"'],
    ['docs', 'docs/x.md', 'filename "docs/x.md" needs a directory "docs", but "docs" is a file used by output "first"'],
    ['docs/x.md', 'docs', 'filename "docs" is a directory of "docs/x.md", used by output "first"'],
    ['docs/x.md', 'Docs', 'filename "Docs" is a directory of "docs/x.md", used by output "first"'],
    ['a.md', './a.md', 'filename "a.md" is already used by output "first"'],
    ['caf\u00e9.md', 'cafe\u0301.md', 'filename "caf\u00e9.md" is already used by output "first"'],
    ['readme.md', 'MANIFEST.JSON', 'filename "MANIFEST.JSON" differs only in letter case from "manifest.json", reserved for the bundle manifest'],
    ['readme.md', 'manifest.json/x.md', 'filename "manifest.json/x.md" needs a directory "manifest.json", but "manifest.json" is a file reserved for the bundle manifest'],
  ])('keeps %j and refuses %j after it', async (a, b, message) => {
    const result = await run(a, b);
    expect(result.outputs.map((o) => [o.outputId, o.status, o.validationErrors])).toEqual([
      ['first', 'valid', []],
      ['second', 'invalid', [message]],
    ]);
    expect(result.outputs[1]!.filename).toBe('');
    expect([result.status, result.message]).toEqual(['partial', 'some outputs are invalid: second']);
  });

  it('accepts names that differ by more than letter case, and directories that differ only by case', async () => {
    for (const [a, b] of [['docs/a.md', 'Docs/b.md'], ['docs.md', 'docs/x.md'], ['a.md', 'sub/manifest.json']] as const) {
      const result = await run(a, b);
      expect(result.outputs.map((o) => o.status), `${a} ${b}`).toEqual(['valid', 'valid']);
    }
  });
});
