import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createKitRuntime } from './kit-runtime.ts';
import { HostCapabilityError } from './errors.ts';
import { exampleFiles, exampleInput, exampleKit, exampleManifest, hostileKit, loadOrThrow } from './test-support/kits.ts';

const runtime = createKitRuntime({ limits: { timeoutMs: 3000 } });
afterAll(() => runtime.close());

function kitWith(change: { manifest?: (m: any) => void; files?: (f: Record<string, string>) => void }) {
  const manifest = structuredClone(exampleManifest()) as any;
  const files = exampleFiles();
  change.manifest?.(manifest);
  change.files?.(files);
  return loadOrThrow(manifest, files);
}

describe('executeKit', () => {
  it('renders, validates and reports json, yaml and markdown outputs', async () => {
    const result = await runtime.execute(exampleKit(), { tenantId: 'tenant-a', input: exampleInput });
    expect(result).toMatchObject({ kitRef: 'service-starter@1.2.0', status: 'completed', message: null, error: null });
    expect(result.outputs.map((o) => [o.outputId, o.filename, o.contentType, o.status])).toEqual([
      ['openapi', 'openapi.json', 'application/json', 'valid'],
      ['compose', 'deploy/docker-compose.yml', 'application/yaml', 'valid'],
      ['readme', 'README.md', 'text/markdown; charset=utf-8', 'valid'],
    ]);
    const [openapi, compose, readme] = result.outputs;
    expect(JSON.parse(openapi!.content)).toEqual({
      openapi: '3.1.0',
      info: { title: 'Acme Rockets', version: '1.2.0' },
      paths: { '/rockets': { get: { summary: 'List Rockets' } }, '/launchs': { get: { summary: 'List Launchs' } } },
    });
    expect(parseYaml(compose!.content)).toEqual({ services: { api: { image: 'acme/service-starter:1.2.0' }, db: { image: 'postgres:17' } } });
    expect(readme!.content).toBe('# Acme Rockets\n\nIndustry: aerospace\n\n## Entities\n- Rocket\n- Launch\nQuestions asked: 2\n');
    expect(readme!.contentSizeBytes).toBe(Buffer.byteLength(readme!.content));
    expect(result.phases.map((p) => `${p.phase}:${p.status}`)).toEqual([
      'SPEC:completed', 'CHECK:completed', 'DISCOVER:completed', 'PLAN:completed', 'RENDER:completed',
      'VALIDATE:completed', 'APPLY:skipped', 'VERIFY:completed',
    ]);
    expect(result.logs).toEqual([{ phase: 'SPEC', level: 'info', message: 'building spec for Acme Rockets' }]);
    expect(result.executionTimeMs).toBeGreaterThan(0);
  });

  it('writes with {{json}} a YAML scalar a strict YAML parser takes: DEL, C1 controls, U+FFFE and U+FFFF escaped, the value unchanged', async () => {
    const kit = kitWith({ files: (f) => { f['templates/compose.yml.hbs'] = 'services:\n  api:\n    image: {{json businessProfile.company.name}}\n'; } });
    const name = 'Acme\u007f \u0085next \u009f \ufffe\uffff 😀 \u2028 "q" \\';
    const result = await runtime.execute(kit, { tenantId: 'tenant-a', input: { ...exampleInput, businessProfile: { company: { name, industry: 'x' } } } });
    const [openapi, compose] = result.outputs;
    // libyaml and SnakeYAML refuse these characters unescaped ("special characters are not allowed").
    expect(compose!.content).toBe('services:\n  api:\n    image: "Acme\\u007f \\u0085next \\u009f \\ufffe\\uffff 😀 \u2028 \\"q\\" \\\\"\n');
    expect(parseYaml(compose!.content)).toEqual({ services: { api: { image: name } } });
    expect(JSON.parse(openapi!.content).info.title).toBe(name);
  });

  it('reuses the isolate for the same tenant and kit version, never across tenants', async () => {
    const local = createKitRuntime();
    try {
      const kit = exampleKit();
      const first = await local.execute(kit, { tenantId: 'one', input: exampleInput });
      const second = await local.execute(kit, { tenantId: 'one', input: exampleInput });
      expect([first.status, second.status]).toEqual(['completed', 'completed']);
      expect(local.stats()).toMatchObject({ created: 1, idle: 1 });
      expect(second.executionTimeMs).toBeLessThan(first.executionTimeMs);
      await local.execute(kit, { tenantId: 'two', input: exampleInput });
      expect(local.stats()).toMatchObject({ created: 2, idle: 2 });
      const concurrent = await Promise.all([1, 2, 3].map(() => local.execute(kit, { tenantId: 'one', input: exampleInput })));
      expect(concurrent.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    } finally {
      local.close();
    }
  });

  it('fails CHECK listing every missing required input', async () => {
    // SPEC runs before CHECK; this kit's SPEC hook would trip over the missing inputs first.
    const kit = kitWith({ manifest: (m) => { delete m.hooks.SPEC; } });
    const result = await runtime.execute(kit, { tenantId: 'tenant-a', input: { businessProfile: { company: { name: '  ' } } } });
    expect(result.status).toBe('failed');
    expect(result.error).toEqual({ code: 'PHASE_FAILED', phase: 'CHECK', message: 'missing required inputs: businessProfile.company.name, discoveryAnswers.entities' });
    expect(result.outputs).toEqual([]);
  });

  it('fails at the start, saying why, on an input nested deeper than 64 levels (not an internal error)', async () => {
    const internal: unknown[] = [];
    const watched = createKitRuntime({ limits: { timeoutMs: 3000 }, onInternalError: (error) => internal.push(error) });
    try {
      const nest = (levels: number) => Array.from({ length: levels }).reduce<unknown>((inner) => ({ d: inner }), 'leaf');
      for (const kit of [exampleKit(), hostileKit({})]) {
        const deep = await watched.execute(kit, { tenantId: 't', input: { ...exampleInput, deep: nest(20_000) } });
        expect([deep.status, deep.error]).toEqual(['failed', { code: 'PHASE_FAILED', phase: null, message: "the run's input nests deeper than 64 levels" }]);
        expect(deep.phases).toEqual([]);
      }
      // 63 levels under the input's own: as deep as an API body can carry, and run as usual.
      const deepest = await watched.execute(exampleKit(), { tenantId: 't', input: { ...exampleInput, deep: nest(62) } });
      expect(deepest.status).toBe('completed');
      expect(internal).toEqual([]);
    } finally {
      watched.close();
    }
  });

  it('counts an empty list or object as missing, as it counts blank text', async () => {
    const kit = kitWith({ manifest: (m) => { delete m.hooks.SPEC; } });
    for (const entities of [[], {}]) {
      const result = await runtime.execute(kit, { tenantId: 'tenant-a', input: { ...exampleInput, discoveryAnswers: { entities } } });
      expect(result.error).toEqual({ code: 'PHASE_FAILED', phase: 'CHECK', message: 'missing required inputs: discoveryAnswers.entities' });
    }
    // Zero and false are values, not absences.
    const withFalsy = kitWith({ manifest: (m) => { delete m.hooks.SPEC; m.inputs.required = ['a', 'b']; } });
    const result = await runtime.execute(withFalsy, { tenantId: 'tenant-a', input: { ...exampleInput, a: 0, b: false } });
    expect(result.error?.phase).not.toBe('CHECK');
  });

  it('is partial when some outputs break their schema, and lists the errors', async () => {
    const kit = kitWith({ files: (f) => { f['templates/openapi.json.hbs'] = '{"openapi": "2.0", "paths": {}}'; } });
    const result = await runtime.execute(kit, { tenantId: 'tenant-a', input: exampleInput });
    expect(result.status).toBe('partial');
    expect(result.message).toBe('some outputs are invalid: openapi');
    expect(result.outputs[0]).toMatchObject({
      status: 'invalid',
      validationErrors: ["schema: (root): must have required property 'info'", 'schema: /openapi: must match pattern "^3\\."'],
    });
    expect(result.outputs.slice(1).map((o) => o.status)).toEqual(['valid', 'valid']);
  });

  it('marks unparsable json and yaml invalid, and warns about json without a schema', async () => {
    const kit = kitWith({
      manifest: (m) => { delete m.outputs[0].schema; },
      files: (f) => { f['templates/compose.yml.hbs'] = 'services: [unclosed\n'; f['templates/readme.md.hbs'] = '\n'; },
    });
    const result = await runtime.execute(kit, { tenantId: 'tenant-a', input: exampleInput });
    expect(result.outputs.map((o) => [o.status, o.validationErrors, o.validationWarnings])).toEqual([
      ['warning', [], ['no schema declared; only the syntax was checked']],
      ['invalid', [expect.stringMatching(/^not valid YAML: /)], []],
      ['invalid', ['output is empty'], []],
    ]);
    expect(result.status).toBe('partial');
  });

  it('finds duplicate YAML keys in block and flow maps, at any depth, and not across maps', async () => {
    const cases: Array<[string, string[]]> = [
      ['services:\n  web: {}\n  web: {}\n', ['not valid YAML: Map keys must be unique (line 3, column 3)']],
      ['services: {a: 1, b: 2, a: 3}\n', ['not valid YAML: Map keys must be unique (line 1, column 24)']],
      ['"1": x\n1: y\nservices: {}\n', []],
      ['services:\n  a: {name: x}\n  b: {name: x}\n', []],
    ];
    for (const [template, errors] of cases) {
      const kit = kitWith({ manifest: (m) => { delete m.outputs[1].schema; }, files: (f) => { f['templates/compose.yml.hbs'] = template; } });
      const result = await runtime.execute(kit, { tenantId: 'tenant-a', input: exampleInput });
      expect([template, result.outputs[1]?.validationErrors]).toEqual([template, errors]);
    }
  });

  it('refuses YAML alias bombs', async () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 8 }, (_, i) => {
      const prev = i === 0 ? 'a' : `l${i - 1}`;
      return `l${i}: &l${i} [${Array(10).fill(`*${prev}`).join(',')}]`;
    }), 'services: {}'].join('\n');
    const kit = kitWith({ files: (f) => { f['templates/compose.yml.hbs'] = bomb; } });
    const result = await runtime.execute(kit, { tenantId: 'tenant-a', input: exampleInput });
    expect(result.outputs[1]).toMatchObject({ status: 'invalid', validationErrors: [expect.stringMatching(/alias/i)] });
  });

  it('lets a PLAN hook select outputs and pass data to templates, and rejects unknown ids', async () => {
    const planKit = (body: string) => kitWith({
      manifest: (m) => { m.hooks.PLAN = 'hooks/plan.js'; },
      files: (f) => { f['hooks/plan.js'] = `function plan(context) { ${body} }`; f['templates/readme.md.hbs'] = '# {{@plan.title}}\n'; },
    });
    const chosen = await runtime.execute(planKit("return { outputs: ['readme'], data: { title: 'Chosen' } };"), { tenantId: 't', input: exampleInput });
    expect(chosen.outputs.map((o) => [o.outputId, o.content])).toEqual([['readme', '# Chosen\n']]);
    const unknown = await runtime.execute(planKit("return { outputs: ['nope'] };"), { tenantId: 't', input: exampleInput });
    expect(unknown.error).toEqual({ code: 'PHASE_FAILED', phase: 'PLAN', message: 'PLAN selected unknown outputs: "nope"' });
    const malformed = await runtime.execute(planKit('return { outputs: [1] };'), { tenantId: 't', input: exampleInput });
    expect(malformed.error?.message).toBe('PLAN hook (hooks/plan.js) returned an unexpected value: outputs[0]: Invalid input: expected string, received number');
  });

  it('lets a VALIDATE hook add findings and fails the run on VERIFY errors', async () => {
    const kit = kitWith({
      manifest: (m) => { m.hooks.VALIDATE = 'hooks/validate.js'; },
      files: (f) => {
        f['hooks/validate.js'] = "function validate(c) { return { outputs: { readme: { warnings: ['no licence section'] }, compose: { errors: ['no healthcheck'] } } }; }";
        f['hooks/verify.js'] = "function verify(c) { return { errors: ['endpoint /rockets answered 500'], warnings: ['slow'] }; }";
      },
    });
    const result = await runtime.execute(kit, { tenantId: 't', input: exampleInput });
    expect(result.outputs.map((o) => o.status)).toEqual(['valid', 'invalid', 'warning']);
    expect(result.error).toEqual({ code: 'PHASE_FAILED', phase: 'VERIFY', message: 'VERIFY failed: endpoint /rockets answered 500' });
    expect(result.verifyWarnings).toEqual(['slow']);
  });

  it.each([
    ['throws', "function validate(c) { throw new Error('README lacks the licence section; cannot ship'); }", 'HOOK_FAILED'],
    ['never returns', 'function validate(c) { for (;;) {} }', 'LIMIT_EXCEEDED'],
  ])('counts no output as valid when the VALIDATE hook %s: the kit never vouched for them', async (_how, hook, code) => {
    const kit = kitWith({ manifest: (m) => { m.hooks.VALIDATE = 'hooks/validate.js'; }, files: (f) => { f['hooks/validate.js'] = hook; } });
    const result = await runtime.execute(kit, { tenantId: 't', input: exampleInput });
    expect([result.status, result.error?.code, result.error?.phase]).toEqual(['failed', code, 'VALIDATE']);
    expect(result.outputs.length).toBeGreaterThan(0);
    for (const output of result.outputs) {
      expect(output.status).toBe('invalid');
      expect(output.validationErrors).toContain('not validated: the run failed at VALIDATE before VALIDATE finished');
    }
  });

  it('writes adjacent values side by side as text, never adds them up', async () => {
    // Handlebars with noEscape emitted `a + b` where a program (the template, a block) starts with two values.
    const kit = hostileKit({
      template: '{{discoveryAnswers.major}}{{discoveryAnswers.minor}} {{#if discoveryAnswers.on}}{{discoveryAnswers.on}}{{discoveryAnswers.on}}{{/if}} {{discoveryAnswers.none}}{{discoveryAnswers.major}} <{{discoveryAnswers.tag}}> {{html discoveryAnswers.tag}}',
      filename: '{{discoveryAnswers.major}}{{discoveryAnswers.minor}}.txt',
    });
    const input = { ...exampleInput, discoveryAnswers: { major: 1, minor: 2, on: true, none: null, tag: '<b>' } };
    const result = await runtime.execute(kit, { tenantId: 't', input });
    expect(result.status, result.message ?? '').toBe('completed');
    expect(result.outputs[0]!.content).toBe('12 truetrue 1 <<b>> &lt;b&gt;');
    expect(result.outputs[0]!.filename).toBe('12.txt');
  });

  describe('APPLY', () => {
    const applyKit = () => kitWith({
      manifest: (m) => {
        m.hooks.APPLY = 'hooks/apply.js';
        m.credentials = [{ id: 'deploy-token', description: 'token', required: true }, { id: 'optional-key', description: 'x', required: false }];
      },
      files: (f) => {
        f['hooks/apply.js'] = `async function apply(context, kit) {
          kit.log('info', 'using ' + context.credentials['deploy-token'].token);
          const receipt = await kit.deploy({ files: context.outputs.map(function (o) { return o.filename; }) });
          return { receipt: receipt, credentialIds: Object.keys(context.credentials) };
        }`;
      },
    });
    const deploy = { phases: ['APPLY'] as const, call: async (argument: any) => ({ deployed: argument.files.length }) };

    it('opens declared credentials only for APPLY and redacts them from logs', async () => {
      const opened: string[] = [];
      const result = await runtime.execute(applyKit(), {
        tenantId: 't',
        input: exampleInput,
        openCredential: async (id) => { opened.push(id); return id === 'deploy-token' ? { token: 's3cr3t-token-value' } : null; },
        capabilities: { deploy },
      });
      expect(result.status).toBe('completed');
      expect(opened).toEqual(['deploy-token', 'optional-key']);
      expect(result.applyResult).toEqual({ receipt: { deployed: 3 }, credentialIds: ['deploy-token'] });
      expect(result.logs.find((l) => l.phase === 'APPLY')?.message).toBe('using [redacted]');
      expect(JSON.stringify(result)).not.toContain('s3cr3t-token-value');
    });

    describe('a hostOnly credential', () => {
      const hostOnlyKit = () => kitWith({
        manifest: (m) => {
          m.hooks.APPLY = 'hooks/apply.js';
          m.credentials = [{ id: 'push-token', description: 'token', required: true, hostOnly: true }, { id: 'plain', description: 'x', required: false }];
        },
        files: (f) => {
          f['hooks/apply.js'] = `async function apply(context, kit) {
            var pushed = await kit.push({ credential: 'push-token', repository: 'https://git.example/acme/spec' });
            kit.log('info', 'pushed to https://git.example/acme/spec as acme-bot');
            return { pushed: pushed, given: Object.keys(context.credentials), repository: 'https://git.example/acme/spec', username: 'acme-bot' };
          }`;
        },
      });
      const secret = { token: 'h0st-only-t0ken-value', repository: 'https://git.example/acme/spec', username: 'acme-bot' };

      it('reaches the host capability that names it, never the hook, and blanks nothing the hook reports', async () => {
        const opened: string[] = [];
        const openCredential = async (id: string) => { opened.push(id); return id === 'push-token' ? secret : null; };
        // The capability opens the credential itself, as the git capabilities do.
        const push = { phases: ['APPLY'] as const, call: async (argument: any) => ({ authorised: (await openCredential(argument.credential))?.token === secret.token }) };
        const result = await runtime.execute(hostOnlyKit(), { tenantId: 't', input: exampleInput, openCredential, capabilities: { push } });
        expect(result.status, result.message ?? '').toBe('completed');
        expect(opened).toEqual(['push-token', 'plain', 'push-token']);
        // Only the non-hostOnly credentials that opened reach the hook; its result and log read as written.
        expect(result.applyResult).toEqual({ pushed: { authorised: true }, given: [], repository: secret.repository, username: 'acme-bot' });
        expect(result.logs.find((l) => l.phase === 'APPLY')?.message).toBe('pushed to https://git.example/acme/spec as acme-bot');
        expect(JSON.stringify(result)).not.toContain(secret.token);
      });

      it('still fails APPLY before the hook runs when it is required and not configured', async () => {
        let pushes = 0;
        const push = { phases: ['APPLY'] as const, call: async () => ++pushes };
        const result = await runtime.execute(hostOnlyKit(), { tenantId: 't', input: exampleInput, openCredential: async () => null, capabilities: { push } });
        expect(result.message).toBe('APPLY: required credential "push-token" is not configured');
        expect(pushes).toBe(0);
      });
    });

    it.each([
      ['a multi-line key', '-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END KEY-----', ''],
      ['a carriage return', 'CRSECRET\rbabcdef', ''],
      ['surrounding spaces', '   SPACESECRET-b   ', ''],
      ['the end of a long message', 'TAILSECRET-0123456789', 'x'.repeat(1990)],
    ])('redacts a secret with %s from the error and the logs, whatever the message cleaning does to it', async (_case, secret, padding) => {
      const kit = kitWith({
        manifest: (m) => {
          m.hooks.APPLY = 'hooks/apply.js';
          m.credentials = [{ id: 'tok', description: 'token', required: true }];
        },
        files: (f) => {
          f['hooks/apply.js'] = `function apply(c, kit) {
            kit.log('info', ${JSON.stringify(padding)} + c.credentials.tok.key);
            kit.log('info', 'one line: ' + c.credentials.tok.key.split('\\n')[1]);
            throw new Error(${JSON.stringify(padding)} + c.credentials.tok.key);
          }`;
        },
      });
      const result = await runtime.execute(kit, { tenantId: 't', input: exampleInput, openCredential: async () => ({ key: secret }) });
      expect(result.error?.code).toBe('HOOK_FAILED');
      const reported = JSON.stringify([result.error, result.message, result.logs]);
      expect(reported).toContain('[redacted]');
      for (const piece of secret.split(/\s+/).filter((part) => part.length >= 8 && !part.startsWith('-----'))) {
        expect(reported).not.toContain(piece.slice(0, 8));
      }
    });

    it('redacts a secret the APPLY hook hands back in its result, in values and keys alike', async () => {
      const kit = kitWith({
        manifest: (m) => {
          m.hooks.APPLY = 'hooks/apply.js';
          m.credentials = [{ id: 'tok', description: 'token', required: true }];
        },
        files: (f) => {
          f['hooks/apply.js'] = `function apply(c) {
            var echoed = {}; echoed[c.credentials.tok.key] = 'as a key';
            return { echoed: c.credentials.tok, nested: [{ url: 'https://x:' + c.credentials.tok.key + '@git.example' }], keyed: echoed };
          }`;
        },
      });
      const result = await runtime.execute(kit, { tenantId: 't', input: exampleInput, openCredential: async () => ({ key: 'RESULTSECRET-4242' }) });
      expect(result.status).toBe('completed');
      expect(result.applyResult).toEqual({ echoed: { key: '[redacted]' }, nested: [{ url: 'https://x:[redacted]@git.example' }], keyed: { '[redacted]': 'as a key' } });
      expect(JSON.stringify(result)).not.toContain('RESULTSECRET');
    });

    it('is skipped on dryRun and skipApply without opening credentials', async () => {
      for (const options of [{ dryRun: true }, { skipApply: true }]) {
        const opened: string[] = [];
        const result = await runtime.execute(applyKit(), {
          tenantId: 't', input: exampleInput, options,
          openCredential: async (id) => { opened.push(id); return { token: 'x' }; },
          capabilities: { deploy },
        });
        expect(result.status).toBe('completed');
        expect(result.phases.find((p) => p.phase === 'APPLY')).toMatchObject({ status: 'skipped' });
        expect(opened).toEqual([]);
      }
    });

    it('fails when a required credential is missing, without leaking the opener error', async () => {
      const missing = await runtime.execute(applyKit(), { tenantId: 't', input: exampleInput, openCredential: async () => null, capabilities: { deploy } });
      expect(missing.error).toEqual({ code: 'PHASE_FAILED', phase: 'APPLY', message: 'required credential "deploy-token" is not configured' });
      const broken = await runtime.execute(applyKit(), {
        tenantId: 't', input: exampleInput, capabilities: { deploy },
        openCredential: async () => { throw new Error('decrypt failed for hunter2'); },
      });
      expect(broken.error?.message).toBe('credential "deploy-token" could not be opened');
    });

    it('limits host functions to their phases and hides host error details', async () => {
      const kit = kitWith({
        manifest: (m) => { m.hooks.PLAN = 'hooks/plan.js'; },
        files: (f) => {
          f['hooks/plan.js'] = `async function plan(c, kit) {
            const seen = [];
            for (const name of ['deploy', 'explode', 'refuse']) {
              try { await kit[name]({}); seen.push(name + ': ok'); } catch (e) { seen.push(name + ': ' + e.message); }
            }
            kit.log('info', seen.join(' | '));
            return null;
          }`;
        },
      });
      const result = await runtime.execute(kit, {
        tenantId: 't', input: exampleInput,
        capabilities: {
          deploy,
          explode: { call: () => { throw new Error('connect ECONNREFUSED 10.0.0.7:5432'); } },
          refuse: { call: () => { throw new HostCapabilityError('quota reached'); } },
        },
      });
      expect(result.logs.find((l) => l.phase === 'PLAN')?.message).toBe(
        'deploy: kit.deploy is not available in phase PLAN | explode: host function explode failed | refuse: quota reached',
      );
    });
  });
});
