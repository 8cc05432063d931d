/**
 * Kits that attack the sandbox. Each must fail safely with a clear message, and the same runtime
 * must then still run a normal kit (afterEach).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createKitRuntime } from './kit-runtime.ts';
import type { KitPackage } from './kit-package.ts';
import { exampleInput, exampleKit, hostileKit, loadOrThrow } from './test-support/kits.ts';

const runtime = createKitRuntime({
  limits: { timeoutMs: 1000, memoryMb: 32, maxOutputBytes: 64 * 1024, maxTotalOutputBytes: 256 * 1024, maxTemplateDepth: 8, maxHostCalls: 50 },
});
const echo = { call: (argument: unknown) => argument };
afterAll(() => runtime.close());
afterEach(async () => {
  const normal = await runtime.execute(exampleKit(), { tenantId: 'tenant-h', input: exampleInput });
  expect(normal.status).toBe('completed');
});

const run = (kit: KitPackage, input: Record<string, unknown> = { name: 'world' }) =>
  runtime.execute(kit, { tenantId: 'tenant-h', input, capabilities: { echo } });

/** A PLAN hook whose return value `data` the template prints as JSON. */
const probe = (body: string) => hostileKit({ hooks: { PLAN: `async function plan(context, kit) { ${body} }` }, template: '{{json @plan}}' });
const probed = async (body: string) => {
  const result = await run(probe(body));
  expect(result.status, JSON.stringify(result.error)).toBe('completed');
  return JSON.parse(result.outputs[0]!.content);
};

describe('limits', () => {
  it.each([
    ['a synchronous infinite loop', { PLAN: 'function plan() { for (;;) {} }' }],
    ['an infinite loop in a promise callback', { PLAN: 'function plan() { Promise.resolve().then(() => { for (;;) {} }); return null; }' }],
    ['an infinite loop after an await', { PLAN: 'async function plan() { await null; for (;;) {} }' }],
    ['a promise that never settles', { PLAN: 'function plan() { return new Promise(function () {}); }' }],
    ['an infinite loop at the top of the hook file', { PLAN: 'for (;;) {}\nfunction plan() {}' }],
    ['an error whose message getter loops', { PLAN: 'function plan() { const e = new Error(); Object.defineProperty(e, "message", { get() { for (;;) {} } }); throw e; }' }],
  ])('stops %s at the time limit', async (_, hooks) => {
    const started = performance.now();
    const result = await run(hostileKit({ hooks }));
    expect(result.status).toBe('failed');
    expect(result.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'time', phase: 'PLAN', message: 'kit exceeded its time limit of 1000 ms' });
    expect(performance.now() - started).toBeLessThan(4000);
  });

  it('stops a memory bomb, replaces the isolate and stays healthy', async () => {
    // Its own runtime with a generous time limit, so a busy machine cannot turn this into a timeout.
    const roomy = createKitRuntime({ limits: { timeoutMs: 20_000, memoryMb: 16 } });
    try {
      const bomb = hostileKit({ hooks: { PLAN: 'function plan() { const a = []; for (;;) a.push(new Array(100000).fill(a.length)); }' } });
      const result = await roomy.execute(bomb, { tenantId: 'tenant-h', input: {} });
      expect(result.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'memory', phase: 'PLAN', message: 'kit exceeded its memory limit of 16 MB' });
      const again = await roomy.execute(exampleKit(), { tenantId: 'tenant-h', input: exampleInput });
      expect(again.status).toBe('completed');
      expect(roomy.stats()).toMatchObject({ created: 2 });
    } finally {
      roomy.close();
    }
  });

  it('caps the size of an output', async () => {
    const result = await run(hostileKit({ template: '{{#each items}}{{../big}}{{/each}}' }), { items: [1, 2, 3], big: 'x'.repeat(30_000) });
    expect(result.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'output-size', phase: 'RENDER', message: 'kit exceeded its output size limit of 65536 bytes (output "out")' });
  });

  it('caps the size of a hook result', async () => {
    const result = await run(hostileKit({ hooks: { PLAN: 'function plan() { return { data: "x".repeat(300000) }; }' } }));
    expect(result.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'output-size', phase: 'PLAN', message: 'kit exceeded its total output size limit of 262144 bytes (PLAN hook result)' });
  });

  it('caps partial recursion and block nesting', async () => {
    const recursive = await run(hostileKit({ template: '{{> loop}}', partials: { loop: 'again {{> loop}}' } }));
    expect(recursive.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'template-depth', phase: 'RENDER', message: 'kit exceeded its template depth limit of 8 (partials nested too deep)' });
    const inline = await run(hostileKit({ template: '{{#*inline "r"}}{{> r}}{{/inline}}{{> r}}' }));
    expect(inline.error?.limit).toBe('template-depth');
    const nested = await run(hostileKit({ template: '{{#if a}}'.repeat(9) + 'x' + '{{/if}}'.repeat(9) }), { a: true });
    expect(nested.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'template-depth', phase: 'RENDER', message: 'kit exceeded its template depth limit of 8 (blocks nest 9 deep)' });
  });

  it.each([
    ['a continuation on the promise it got', 'kit.log("info", "bye").then(() => { for (;;) {} });'],
    ['a Promise.prototype.then of its own', 'const then = Promise.prototype.then; Promise.prototype.then = function (f, r) { return then.call(this, () => { for (;;) {} }, r); }; kit.log("info", "bye");'],
  ])('runs nothing a hook left waiting on a host call after it returned (%s), so the next run of the kit is unharmed', async (_, leftBehind) => {
    // The reply to kit.log reaches the isolate after VERIFY (the last phase) returned; kit code
    // chained on it used to run there outside any time limit, spinning until the next run timed out.
    const kit = hostileKit({ hooks: { VERIFY: `function verify(context, kit) { if (context.input.loop) { ${leftBehind} } return null; }` } });
    const first = await run(kit, { name: 'a', loop: true });
    expect(first.status).toBe('completed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    const second = await run(kit, { name: 'b' });
    expect(second.error).toBeNull();
    expect(second.status).toBe('completed');
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('keeps a log line a hook writes as it returns, and finishes a host call it did not await, within its phase', async () => {
    // The host used to get to the hook's answer before its last kit.log now and then (about one run
    // in five): the line was lost, or landed in the next phase.
    const calls: string[] = [];
    const record = { phases: ['PLAN'] as const, call: async (argument: any) => { await new Promise((resolve) => setTimeout(resolve, 20)); calls.push(argument.id); return null; } };
    const kit = hostileKit({
      hooks: {
        PLAN: 'function plan(context, kit) { kit.record({ id: context.input.name }); kit.log("info", "planned " + context.input.name); return null; }',
        VERIFY: 'function verify() { return null; }',
      },
    });
    for (let i = 0; i < 30; i++) {
      const result = await runtime.execute(kit, { tenantId: 't', input: { name: `run-${i}` }, capabilities: { record } });
      expect(result.status, result.message ?? '').toBe('completed');
      expect(result.logs).toEqual([{ phase: 'PLAN', level: 'info', message: `planned run-${i}` }]);
      expect(calls.at(-1)).toBe(`run-${i}`);
    }
    expect(calls).toHaveLength(30);
  });

  it('refuses a host call made after the hook returned, so no capability outlives its phase or the run', async () => {
    // An async helper the hook did not await runs on after the hook returned. Its call used to reach
    // the host once the phase had stopped waiting: the capability ran on after the run had ended.
    const calls: string[] = [];
    const slow = { call: async (_: unknown, call: { phase: string }) => { calls.push(`start ${call.phase}`); await new Promise((resolve) => setTimeout(resolve, 100)); calls.push('end'); return null; } };
    const late = (then: string) => hostileKit({ hooks: { PLAN: `async function plan(c, kit) { (async function () { await null; await null; await null; kit.slow({})${then}; })(); return null; }` } });
    const unhandled = await runtime.execute(late(''), { tenantId: 'tenant-h', input: { name: 'x' }, capabilities: { slow } });
    const handled = await runtime.execute(late('.catch(function () {})'), { tenantId: 'tenant-h', input: { name: 'x' }, capabilities: { slow } });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(calls).toEqual([]);
    expect(unhandled.error).toEqual({ code: 'HOOK_FAILED', phase: 'PLAN', message: 'kit.slow was called after its hook returned' });
    expect(handled.status, handled.message ?? '').toBe('completed');
  });

  it('ends the phase of a hook that runs out of stack while calling the host, instead of waiting for the time limit', async () => {
    // Near the stack's end a call could reach the host and be counted, yet fail before the bridge
    // was set to hear its reply: the phase then waited for that reply until the time limit.
    const hook = `
      var deepest = 0, calling = false;
      function dive(depth) {
        if (depth > deepest) deepest = depth;
        try { dive(depth + 1); } catch (e) {}
        if (calling && depth > deepest - 4000) { try { kit.echo(1); } catch (e) {} }
      }
      function plan() { dive(0); calling = true; dive(0); return null; }`;
    const started = performance.now();
    const result = await run(hostileKit({ hooks: { PLAN: hook } }));
    expect(result.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'host-calls', phase: 'PLAN', message: 'kit exceeded its host call limit of 50 calls' });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('fails a hook result nesting too deep for the host with a plain message, not an internal error', async () => {
    const result = await run(hostileKit({ hooks: { SPEC: 'function spec() { let v = 1; for (let i = 0; i < 10000; i++) v = [v]; return v; }' } }));
    expect(result.error).toEqual({ code: 'HOOK_FAILED', phase: 'SPEC', message: 'SPEC hook (hooks/spec.js) returned a value that nests deeper than 256 levels' });
  });

  it('marks an output nesting too deep for its recursive schema invalid, not an internal error', async () => {
    const kit = loadOrThrow(
      {
        metadata: { id: 'deep-output', displayName: 'Deep', version: '1.0.0', description: '', author: 'test', kitType: 'file' },
        platform: { name: 'none', category: 'test' },
        phases: ['PLAN'],
        outputs: [{ id: 'out', filename: 'out.json', template: 'templates/out.hbs', outputType: 'json', schema: 'schemas/out.json' }],
        discovery: { pools: [] },
      },
      { 'templates/out.hbs': '{{{open}}}{{{close}}}', 'schemas/out.json': JSON.stringify({ items: { $ref: '#' } }) },
    );
    const result = await run(kit, { open: '['.repeat(20_000), close: ']'.repeat(20_000) });
    expect(result.error).toBeNull();
    expect(result.outputs[0]).toMatchObject({ status: 'invalid', validationErrors: ['schema: cannot be checked: the document nests too deeply'] });
  });

  it('caps host calls even when the hook swallows the error', async () => {
    const result = await run(hostileKit({ hooks: { PLAN: 'async function plan(c, kit) { for (let i = 0; i < 200; i++) { try { await kit.log("info", "x"); } catch (e) {} } return null; }' } }));
    expect(result.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'host-calls', phase: 'PLAN', message: 'kit exceeded its host call limit of 50 calls' });
  });
});

describe('escapes', () => {
  it('finds no process through this.constructor.constructor, directly or via any host function', async () => {
    const data = await probed(`
      const attempts = {
        direct: () => this.constructor.constructor('return typeof process')(),
        globalThisFunction: () => globalThis.constructor.constructor('return typeof process + typeof require')(),
        log: () => kit.log.constructor.constructor('return typeof process')(),
        echo: () => kit.echo.constructor.constructor('return typeof process')(),
        console: () => console.log.constructor.constructor('return typeof process')(),
        logPromise: () => kit.log('info', 'x').constructor.constructor('return typeof process')(),
        hookArgument: () => context.constructor.constructor('return typeof process')(),
        fromHostResult: async () => (await kit.echo({ a: 1 })).constructor.constructor('return typeof process')(),
        rejection: async () => { try { await kit.nothing(); } catch (e) { return e.constructor.constructor('return typeof process')(); } },
      };
      const data = {};
      for (const name of Object.keys(attempts)) data[name] = await attempts[name]();
      return { data };
    `);
    const { globalThisFunction, ...rest } = data;
    expect(globalThisFunction).toBe('undefinedundefined');
    expect(Object.keys(rest)).toHaveLength(8);
    expect(Object.values(rest)).toEqual(Array(8).fill('undefined'));
  });

  it('exposes only the allow-list on the global object and on kit', async () => {
    const data = await probed(`
      const standard = new Set(['Object','Function','Array','Number','parseFloat','parseInt','Infinity','NaN','undefined','Boolean','String','Symbol','Date','Promise','RegExp','Error','AggregateError','EvalError','RangeError','ReferenceError','SyntaxError','TypeError','URIError','globalThis','JSON','Math','Intl','ArrayBuffer','Atomics','Uint8Array','Int8Array','Uint16Array','Int16Array','Uint32Array','Int32Array','Float32Array','Float64Array','Uint8ClampedArray','BigUint64Array','BigInt64Array','DataView','Map','BigInt','Set','WeakMap','WeakSet','Proxy','Reflect','FinalizationRegistry','WeakRef','decodeURI','decodeURIComponent','encodeURI','encodeURIComponent','escape','unescape','eval','isFinite','isNaN','SharedArrayBuffer','WebAssembly','Iterator','Float16Array','SuppressedError','DisposableStack','AsyncDisposableStack']);
      const extra = Object.getOwnPropertyNames(globalThis).filter((n) => !standard.has(n)).sort();
      return { data: {
        extra,
        kit: Object.getOwnPropertyNames(kit).sort(),
        types: [typeof require, typeof process, typeof module, typeof exports, typeof setTimeout, typeof fetch, typeof WebAssembly, typeof SharedArrayBuffer, typeof Atomics, typeof ivm, typeof $0],
        bridgeHidden: Object.getOwnPropertySymbols(globalThis).length,
      } };
    `);
    expect(data.extra).toEqual(['console', 'kit', 'plan']);
    expect(data.kit).toEqual(['echo', 'log']);
    expect(data.types).toEqual(Array(11).fill('undefined'));
    expect(data.bridgeHidden).toBe(0);
  });

  it('cannot redirect how values cross by planting properties on Object.prototype', async () => {
    const data = await probed(`
      Object.prototype.reference = true;
      Object.prototype.externalCopy = true;
      Object.prototype.copy = false;
      const answer = await kit.echo({ hello: 'host' });
      const shape = typeof answer + ':' + JSON.stringify(answer) + ':' + typeof answer.deref;
      for (const k of ['reference', 'externalCopy', 'copy']) delete Object.prototype[k];
      return { data: shape };
    `);
    expect(data).toBe('object:{"hello":"host"}:undefined');
  });

  it('fails a hook that throws a Proxy or a non-JSON value with a plain message', async () => {
    const proxy = await run(hostileKit({ hooks: { PLAN: 'function plan() { throw new Proxy({}, { get() { throw new Proxy({}, {}); }, has() { return true; } }); }' } }));
    expect(proxy.error).toEqual({ code: 'HOOK_FAILED', phase: 'PLAN', message: 'PLAN hook (hooks/plan.js) failed: unknown error' });
    const bigint = await run(hostileKit({ hooks: { PLAN: 'function plan() { return { data: 10n }; }' } }));
    expect(bigint.error?.message).toMatch(/^PLAN hook \(hooks\/plan\.js\) failed: returned a value that is not JSON: /);
    // Publishing refuses such a hook (kit-package.ts); a version stored before that check may have one.
    const missing = await run(hostileKit({ hooks: { PLAN: 'function notPlan() {}' }, stored: true }));
    expect(missing.error?.message).toBe('PLAN hook hooks/plan.js does not define function plan(context, kit)');
  });

  it('leaves nothing from one run for the next on the same isolate', async () => {
    const kit = probe(`
      const before = { leaked: typeof globalThis.leaked, polluted: ({}).polluted === undefined, json: JSON.stringify([1]) };
      globalThis.leaked = 'secret';
      Object.prototype.polluted = 'yes';
      JSON.stringify = () => 'hijacked';
      return { data: before };
    `);
    const created = runtime.stats().created;
    const first = await run(kit);
    const second = await run(kit);
    expect(runtime.stats().created).toBe(created + 1);
    for (const result of [first, second]) {
      expect(JSON.parse(result.outputs[0]!.content)).toEqual({ leaked: 'undefined', polluted: true, json: '[1]' });
    }
  });
});

describe('templates', () => {
  it.each([
    ['{{constructor.constructor}}', {}],
    ['{{#with "s" as |s|}}{{s.constructor}}{{s.constructor.name}}{{/with}}', {}],
    ['{{__proto__}}{{__proto__.constructor}}{{this.__proto__}}', {}],
    ['{{__defineGetter__}}{{__lookupGetter__}}{{valueOf}}{{toString}}', {}],
    ['{{lookup this "constructor"}}{{lookup (lookup this "constructor") "constructor"}}', {}],
    ['{{#each this}}{{@key}}{{/each}}{{polluted}}', JSON.parse('{"__proto__": {"polluted": "yes"}}')],
    [
      // The Handlebars 4.0.x RCE payload.
      `{{#with "s" as |string|}}{{#with "e"}}{{#with split as |conslist|}}{{this.pop}}{{this.push (lookup string.sub "constructor")}}{{this.pop}}
       {{#with string.split as |codelist|}}{{this.pop}}{{this.push "return typeof process;"}}{{this.pop}}
       {{#each conslist}}{{#with (string.sub.apply 0 codelist)}}{{this}}{{/with}}{{/each}}{{/with}}{{/with}}{{/with}}{{/with}}`,
      {},
    ],
  ])('prototype access payload %j reveals nothing', async (template, input) => {
    const result = await run(hostileKit({ template: `[${template}]` }), input as Record<string, unknown>);
    const content = result.outputs[0]?.content ?? '';
    expect(content).not.toMatch(/function|native code|object|undefined|yes|Object|String/);
    expect(result.error?.code ?? 'none').not.toBe('INTERNAL_ERROR');
  });
});

describe('output filenames', () => {
  it.each([
    ['../../etc/passwd', 'must not contain ".." segments'],
    ['..\\..\\windows\\win.ini', 'must use "/" as separator, not "\\"'],
    ['/etc/passwd', 'must be relative, not absolute'],
    ['out\u0000.txt', 'must not contain NUL or other control characters'],
    ['manifest.json', 'reserved for the bundle manifest'],
  ])('fails the output named %j safely', async (name, reason) => {
    const result = await run(hostileKit({ filename: '{{name}}' }), { name });
    expect(result.status).toBe('failed');
    expect(result.outputs[0]).toMatchObject({ filename: '', status: 'invalid', validationErrors: [expect.stringContaining(reason)] });
    expect(result.message).toBe('every output is invalid: out');
  });
});
