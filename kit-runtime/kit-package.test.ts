import { describe, expect, it } from 'vitest';
import { loadKitPackage, MAX_KIT_SCHEMA_BYTES } from './kit-package.ts';
import { exampleFiles, exampleManifest } from './test-support/kits.ts';

function problemsOf(changeFiles: (files: Record<string, string>) => void, changeManifest?: (m: any) => void) {
  const files = exampleFiles();
  const manifest = structuredClone(exampleManifest()) as any;
  changeFiles(files);
  changeManifest?.(manifest);
  const loaded = loadKitPackage({ manifest, files });
  return loaded.ok ? [] : loaded.problems;
}

describe('loadKitPackage', () => {
  it('loads the example kit with a stable fingerprint', () => {
    const first = loadKitPackage({ manifest: exampleManifest(), files: exampleFiles() });
    const second = loadKitPackage({ manifest: exampleManifest(), files: exampleFiles() });
    expect(first.ok && second.ok).toBe(true);
    if (!first.ok || !second.ok) return;
    expect(first.kit.ref).toBe('service-starter@1.2.0');
    expect(first.kit.fingerprint).toBe(second.kit.fingerprint);
    expect(first.kit.discoveryPools['discovery/questions.json']).toHaveLength(2);
  });

  it('reports manifest errors against kit.json with their path', () => {
    expect(problemsOf(() => {}, (m) => { m.outputs[0].template = '../outside.hbs'; })).toEqual([
      { file: 'kit.json', message: 'outputs[0].template: file path must not contain ".." segments' },
    ]);
  });

  it('names every missing file and what references it', () => {
    const problems = problemsOf((f) => {
      delete f['templates/compose.yml.hbs'];
      delete f['schemas/openapi.schema.json'];
      delete f['hooks/verify.js'];
    });
    expect(problems).toEqual([
      { file: 'schemas/openapi.schema.json', message: 'missing file (referenced by kit.json outputs[0].schema)' },
      { file: 'templates/compose.yml.hbs', message: 'missing file (referenced by kit.json outputs[1].template)' },
      { file: 'hooks/verify.js', message: 'missing file (referenced by kit.json hooks.VERIFY)' },
    ]);
  });

  it('says how to write a manifest path that names a sent file in another spelling, instead of calling it missing', () => {
    const nfd = 'templates/re\u0301sume\u0301.md.hbs';
    const problems = problemsOf(
      (f) => { f['templates/r\u00e9sum\u00e9.md.hbs'] = '# CV\n'; },
      (m) => {
        m.outputs[2].template = './templates/readme.md.hbs';
        m.outputs.push({ id: 'cv', filename: 'CV.md', template: nfd, outputType: 'markdown' });
      },
    );
    expect(problems).toEqual([
      { file: './templates/readme.md.hbs', message: 'write this path as "templates/readme.md.hbs", the name the file is stored under (referenced by kit.json outputs[2].template)' },
      { file: nfd, message: `write this path as "${nfd.normalize('NFC')}", the name the file is stored under (referenced by kit.json outputs[3].template)` },
    ]);
  });

  it('names the template and line of a Handlebars syntax error', () => {
    const problems = problemsOf((f) => { f['templates/readme.md.hbs'] = '# Title\n\n{{#each items}}\n- {{this}}\n{{/with}}\n'; });
    // Handlebars reports a mismatched block at the line that opened it.
    expect(problems).toEqual([{ file: 'templates/readme.md.hbs', line: 3, message: expect.stringContaining("each doesn't match with") }]);
  });

  it('rejects templates that nest blocks deeper than the depth limit', () => {
    const deep = '{{#if a}}'.repeat(40) + 'x' + '{{/if}}'.repeat(40);
    const problems = problemsOf((f) => { f['templates/readme.md.hbs'] = deep; });
    expect(problems).toEqual([{ file: 'templates/readme.md.hbs', message: 'blocks nest 40 deep, over the template depth limit of 32' }]);
  });

  it('counts an else-if chain as one level', () => {
    const chain = '{{#if a}}a' + Array.from({ length: 50 }, (_, i) => `{{else if b${i}}}b`).join('') + '{{/if}}';
    expect(problemsOf((f) => { f['templates/readme.md.hbs'] = chain; })).toEqual([]);
  });

  it('names the schema file that is not JSON or not a JSON Schema', () => {
    expect(problemsOf((f) => { f['schemas/openapi.schema.json'] = '{\n  "type": "object",\n}'; })).toEqual([
      { file: 'schemas/openapi.schema.json', line: 3, message: expect.stringMatching(/^not valid JSON: /) },
    ]);
    expect(problemsOf((f) => { f['schemas/compose.schema.json'] = '{"type": "banana"}'; })).toEqual([
      { file: 'schemas/compose.schema.json', message: expect.stringMatching(/^not a valid JSON Schema: /) },
    ]);
  });

  it('compiles a schema file once however many outputs use it, so a schema with an $id can serve two', () => {
    const withId = JSON.stringify({ $id: 'https://kits.example/openapi.schema.json', type: 'object' });
    expect(problemsOf((f) => { f['schemas/openapi.schema.json'] = withId; }, (m) => { m.outputs[1].schema = 'schemas/openapi.schema.json'; })).toEqual([]);
  });

  it('refuses output schemas that together exceed the kit\'s budget, without compiling any of them', () => {
    // Each schema is within the per-schema cap and fine on its own; broken JSON would be named if compiled.
    const large = (n: number) => JSON.stringify({ type: 'object', description: 'x'.repeat(n) });
    const half = MAX_KIT_SCHEMA_BYTES / 2;
    expect(problemsOf((f) => { f['schemas/openapi.schema.json'] = large(half - 100); f['schemas/compose.schema.json'] = large(half - 100); })).toEqual([]);
    const [first, second] = [large(half), `${large(half)}{`];
    expect(problemsOf((f) => { f['schemas/openapi.schema.json'] = first; f['schemas/compose.schema.json'] = second; })).toEqual([
      { file: 'kit.json', message: `the output schemas together are ${first.length + second.length} bytes, over the limit of ${MAX_KIT_SCHEMA_BYTES} bytes for one kit` },
    ]);
  });

  it('refuses two fixed output names that cannot unpack side by side when every output renders (no PLAN hook)', () => {
    const clash = (m: any) => { m.outputs[2].filename = 'OPENAPI.json'; };
    expect(problemsOf(() => {}, clash)).toEqual([
      { file: 'kit.json', message: 'outputs[2].filename: filename "OPENAPI.json" differs only in letter case from "openapi.json", used by output "openapi"' },
    ]);
    expect(problemsOf(() => {}, (m) => { m.outputs[2].filename = 'openapi.json/README.md'; })).toEqual([
      { file: 'kit.json', message: expect.stringContaining('needs a directory "openapi.json"') },
    ]);
    // A PLAN hook may choose one of them per run: then the run decides.
    expect(problemsOf((f) => { f['hooks/plan.js'] = 'function plan() { return { outputs: ["openapi"] }; }'; }, (m) => { clash(m); m.hooks.PLAN = 'hooks/plan.js'; })).toEqual([]);
    // A forEach output renders once per item, or not at all: the run decides too.
    expect(problemsOf(() => {}, (m) => { clash(m); m.outputs[2].forEach = 'discoveryAnswers.entities'; })).toEqual([]);
  });

  it('loads a stored version without the checks that guard only what a publish may add', () => {
    const files = exampleFiles();
    const manifest = structuredClone(exampleManifest()) as any;
    manifest.outputs[2].filename = 'OPENAPI.json';
    manifest.platform = { name: 'n'.repeat(201), category: 'c'.repeat(201) };
    files['schemas/openapi.schema.json'] = JSON.stringify({ type: 'object', description: 'x'.repeat(MAX_KIT_SCHEMA_BYTES) });
    expect(loadKitPackage({ manifest, files }).ok).toBe(false);
    const stored = loadKitPackage({ manifest, files, stored: true });
    expect(stored.ok ? stored.kit.ref : stored.problems).toBe('service-starter@1.2.0');
  });

  describe('partials', () => {
    it('refuses a template that calls a partial the kit does not provide, naming the file and line', () => {
      expect(problemsOf((f) => { f['templates/readme.md.hbs'] += '\n{{> nothere}}\n{{> nothere}}\n'; })).toEqual([
        { file: 'templates/readme.md.hbs', line: 9, message: 'template uses partial "nothere", which the kit does not provide (kit.json partials: entityList; no {{#*inline "nothere"}} either)' },
      ]);
      // In a partial file, by a quoted name, a name every object inherits, or from a templated filename.
      const problems = problemsOf(
        (f) => { f['templates/entity-list.hbs'] += '{{> "row"}}'; f['templates/compose.yml.hbs'] += '{{~> constructor}}'; },
        (m) => { m.outputs[2].filename = '{{> slug}}.md'; delete m.partials; m.outputs.push({ id: 'list', filename: 'list.md', template: 'templates/entity-list.hbs', outputType: 'markdown' }); },
      );
      expect(problems).toEqual([
        { file: 'templates/compose.yml.hbs', line: 6, message: expect.stringContaining('partial "constructor", which the kit does not provide (kit.json declares no partials;') },
        { file: 'templates/readme.md.hbs', line: 6, message: expect.stringContaining('partial "entityList", which the kit does not provide') },
        { file: 'kit.json', message: expect.stringMatching(/^outputs\[2\]\.filename: template uses partial "slug", which the kit does not provide/) },
        { file: 'templates/entity-list.hbs', line: 2, message: expect.stringContaining('partial "row", which the kit does not provide') },
      ]);
    });

    it('accepts inline partials, partial blocks with a fallback, dynamic names and @partial-block', () => {
      expect(problemsOf(
        (f) => {
          // An inline partial reaches the partials called where it is declared.
          f['templates/readme.md.hbs'] = '{{#*inline "row"}}- {{this}}{{/inline}}{{> entityList}}\n{{#> layout}}body{{/layout}}\n{{> (lookup . "kind")}}\n{{#> frame}}framed{{/frame}}';
          f['templates/entity-list.hbs'] = '{{#each discoveryAnswers.entities}}{{> row}}\n{{/each}}';
          f['templates/frame.hbs'] = '[{{> @partial-block}}]';
        },
        (m) => { m.partials.frame = 'templates/frame.hbs'; },
      )).toEqual([]);
      // With a computed inline name, any name may be provided.
      expect(problemsOf((f) => { f['templates/readme.md.hbs'] = '{{#*inline kind}}x{{/inline}}{{> anything}}'; })).toEqual([]);
    });

    it('loads a stored version that calls a partial it does not provide: its runs report that output, as before', () => {
      const files = exampleFiles();
      files['templates/readme.md.hbs'] += '{{> nothere}}';
      expect(loadKitPackage({ manifest: exampleManifest(), files }).ok).toBe(false);
      expect(loadKitPackage({ manifest: exampleManifest(), files, stored: true }).ok).toBe(true);
    });
  });

  it('names the hook file and line of a JavaScript syntax error', () => {
    const problems = problemsOf((f) => { f['hooks/spec.js'] = 'function spec(context) {\n  return {\n}}}\n'; });
    expect(problems).toEqual([{ file: 'hooks/spec.js', line: 3, message: "hook is not valid JavaScript: Unexpected token '}'" }]);
  });

  it('names a syntax error once in a hook file that several phases share, and a missing phase function for each phase', () => {
    const shared = (m: any) => { m.hooks.VERIFY = 'hooks/spec.js'; };
    expect(problemsOf((f) => { f['hooks/spec.js'] = 'function spec(context) {\n  return {\n}}}\n'; }, shared)).toEqual([
      { file: 'hooks/spec.js', line: 3, message: "hook is not valid JavaScript: Unexpected token '}'" },
    ]);
    expect(problemsOf(() => {}, shared)).toEqual([
      { file: 'hooks/spec.js', message: 'hook does not define function verify(context, kit), which the runtime calls for VERIFY' },
    ]);
  });

  it('names no line for a hook nested too deeply for V8 to parse, rather than a line of node itself', () => {
    const problems = problemsOf((f) => { f['hooks/spec.js'] = `function spec() { return ${'('.repeat(100_000)}1${')'.repeat(100_000)}; }`; });
    expect(problems).toEqual([{ file: 'hooks/spec.js', message: 'hook is not valid JavaScript: Maximum call stack size exceeded' }]);
  });

  it('refuses a hook that cannot be defining the function its phase calls, naming the file (and line)', () => {
    const withSpecHook = (source: string) => problemsOf((f) => { f['hooks/spec.js'] = source; });
    expect(withSpecHook('function run(context) {\n  return {};\n}\n')).toEqual([
      { file: 'hooks/spec.js', message: 'hook does not define function spec(context, kit), which the runtime calls for SPEC' },
    ]);
    expect(withSpecHook('// the spec hook\nconst spec = (context) => ({});\n')).toEqual([
      { file: 'hooks/spec.js', line: 2, message: 'hook declares spec with const, which a hook script does not make visible to the runtime: declare function spec(context, kit) for SPEC' },
    ]);
    expect(withSpecHook('class spec {}\n')).toEqual([expect.objectContaining({ file: 'hooks/spec.js', line: 1, message: expect.stringContaining('declares spec with class') })]);
    // Ways that do define it globally, or may: left to the run.
    for (const defining of ['async function spec() { return {}; }', 'var spec = function () { return {}; };', 'globalThis.spec = () => ({});', "globalThis['spec'] = () => ({});"]) {
      expect(withSpecHook(defining)).toEqual([]);
    }
    // A stored version from before this check still loads; its run reports the missing function.
    const files = exampleFiles();
    files['hooks/spec.js'] = 'function run() {}';
    expect(loadKitPackage({ manifest: exampleManifest(), files, stored: true }).ok).toBe(true);
  });

  it('rejects unsafe file names in the package and a schema on a markdown output', () => {
    const problems = problemsOf(
      (f) => { f['../../etc/cron.d/x'] = 'boom'; f['a\\b.hbs'] = ''; },
      (m) => { m.outputs[2].schema = 'schemas/openapi.schema.json'; },
    );
    expect(problems).toEqual([
      { file: '"../../etc/cron.d/x"', message: 'unsafe file path: must not contain ".." segments' },
      { file: '"a\\\\b.hbs"', message: 'unsafe file path: must use "/" as separator, not "\\"' },
      { file: 'kit.json', message: 'outputs[2].schema: only json and yaml outputs are validated against a schema' },
    ]);
  });

  it('reserves manifest.json for the bundle, in any letter case and as a directory', () => {
    expect(problemsOf(() => {}, (m) => { m.outputs[0].filename = 'manifest.json'; })).toEqual([
      { file: 'kit.json', message: 'outputs[0].filename: filename "manifest.json" is reserved for the bundle manifest' },
    ]);
    expect(problemsOf(() => {}, (m) => { m.outputs[0].filename = 'MANIFEST.JSON'; })).toEqual([
      { file: 'kit.json', message: expect.stringContaining('differs only in letter case from "manifest.json"') },
    ]);
    expect(problemsOf(() => {}, (m) => { m.outputs[0].filename = 'manifest.json/openapi.json'; })).toEqual([
      { file: 'kit.json', message: expect.stringContaining('needs a directory "manifest.json"') },
    ]);
  });

  it('names a discovery pool that does not parse', () => {
    expect(problemsOf((f) => { f['discovery/questions.json'] = '[1, 2'; })).toEqual([
      { file: 'discovery/questions.json', line: 1, message: expect.stringMatching(/^cannot parse discovery pool: /) },
    ]);
  });

  describe('template expression limits', () => {
    it('refuses a template with more expressions than one template may hold, naming the file and the limit', () => {
      expect(problemsOf((f) => { f['templates/readme.md.hbs'] = '{{a}}'.repeat(2001); })).toEqual([
        { file: 'templates/readme.md.hbs', message: 'template has 2001 expressions, over the limit of 2000 per template' },
      ]);
    });

    it('refuses subexpressions nested deeper than templates may nest, before parsing them', () => {
      const nested = (depth: number) => `{{json ${'(json '.repeat(depth)}x${')'.repeat(depth)}}}`;
      expect(problemsOf((f) => { f['templates/readme.md.hbs'] = nested(33); })).toEqual([
        { file: 'templates/readme.md.hbs', message: 'subexpressions nest 33 deep, over the limit of 32' },
      ]);
      // Parentheses inside a string literal are text, not nesting.
      expect(problemsOf((f) => { f['templates/readme.md.hbs'] = `${nested(32)} {{json "${'('.repeat(40)}"}}`; })).toEqual([]);
    });

    it('refuses the reported 1.9 MB template by its text alone', () => {
      expect(problemsOf((f) => { f['templates/readme.md.hbs'] = '{{a}}'.repeat(380_000); })).toEqual([
        { file: 'templates/readme.md.hbs', message: 'template has more than 5000 expressions, over the limit of 2000 per template' },
        { file: '(package)', message: expect.stringMatching(/^templates hold more than 5000 expressions in all, over the limit of 5000 per kit \(largest: templates\/readme\.md\.hbs /) },
      ]);
    });

    it('refuses a kit whose templates together hold more expressions than a kit may, naming the largest', () => {
      const problems = problemsOf(
        (f) => { for (const n of [1, 2, 3]) f[`templates/extra${n}.md.hbs`] = '{{#each items}}{{name}}{{/each}}'.repeat(450); },
        (m) => { for (const n of [1, 2, 3]) m.outputs.push({ id: `extra${n}`, filename: `extra${n}.md`, template: `templates/extra${n}.md.hbs`, outputType: 'markdown' }); },
      );
      expect(problems).toEqual([{
        file: '(package)',
        message: expect.stringMatching(/^templates hold \d+ expressions in all, over the limit of 5000 per kit \(largest: templates\/extra1\.md\.hbs 1800, templates\/extra2\.md\.hbs 1800, templates\/extra3\.md\.hbs 1800\)$/),
      }]);
    });

    it('counts a template used as output and partial once, and a templated filename against the kit', () => {
      const problems = problemsOf(
        (f) => { f['templates/entity-list.hbs'] = '{{a}}'.repeat(1990); },
        (m) => { m.outputs.push({ id: 'list', filename: 'list-{{a}}.md', template: 'templates/entity-list.hbs', outputType: 'markdown' }); },
      );
      expect(problems).toEqual([]);
    });

    it('still refuses a template that parses but does not compile, naming the file', () => {
      expect(problemsOf((f) => { f['templates/readme.md.hbs'] = '# Title\n{{> entityList one two}}\n'; })).toEqual([
        { file: 'templates/readme.md.hbs', line: 2, message: expect.stringContaining('template does not compile: Unsupported number of partial arguments: 2') },
      ]);
    });
  });

  describe('discovery pools', () => {
    const withPool = (file: string, source: string) =>
      problemsOf((f) => { f[file] = source; }, (m) => { m.discovery.pools.push(file); });

    it('refuses a YAML pool whose alias refers to a node containing it, naming the file', () => {
      for (const source of ['questions: &q\n  - *q\n', 'a: &x\n  b:\n    c: *x\n']) {
        expect(withPool('discovery/loop.yaml', source)).toEqual([
          { file: 'discovery/loop.yaml', message: 'cannot parse discovery pool: an alias refers to a node that contains it; a pool must be plain data without cycles' },
        ]);
      }
    });

    it('refuses a YAML pool with a duplicate key, saying where', () => {
      expect(withPool('discovery/twice.yaml', 'questions:\n  - id: a\n    id: b\n')).toEqual([
        { file: 'discovery/twice.yaml', line: 3, message: 'cannot parse discovery pool: Map keys must be unique (line 3, column 5)' },
      ]);
    });

    it('refuses alias expansion bombs and pools nested deeper than 256 levels', () => {
      const bomb = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
      for (const [previous, name] of [['a', 'b'], ['b', 'c'], ['c', 'd'], ['d', 'e'], ['e', 'f'], ['f', 'g']]) {
        bomb.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
      }
      expect(withPool('discovery/bomb.yml', bomb.join('\n'))).toEqual([
        { file: 'discovery/bomb.yml', message: 'cannot parse discovery pool: Excessive alias count indicates a resource exhaustion attack' },
      ]);
      expect(withPool('discovery/deep.json', '['.repeat(300) + ']'.repeat(300))).toEqual([
        { file: 'discovery/deep.json', message: 'cannot parse discovery pool: nests deeper than 256 levels' },
      ]);
    });

    it('keeps aliases that share a node without a cycle', () => {
      const loaded = loadKitPackage({
        manifest: { ...exampleManifest(), discovery: { pools: ['discovery/shared.yaml'] } },
        files: { ...exampleFiles(), 'discovery/shared.yaml': 'base: &b {asked: 1}\nfirst: *b\nsecond: *b\n' },
      });
      expect(loaded.ok && loaded.kit.discoveryPools['discovery/shared.yaml']).toEqual({ base: { asked: 1 }, first: { asked: 1 }, second: { asked: 1 } });
    });
  });
});
