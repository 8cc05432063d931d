import { afterAll, describe, expect, it } from 'vitest';
import { createKitRuntime } from './kit-runtime.ts';
import { createSecretRedactor } from './secret-redactor.ts';
import { exampleInput, hostileKit, loadOrThrow } from './test-support/kits.ts';

const runtime = createKitRuntime({ limits: { timeoutMs: 3000 } });
afterAll(() => runtime.close());

// A quote, a backslash and a tab: each one JSON.stringify escapes.
const SECRET = 'pa"ss\\w0rd\tXYZ-SECRET';

const applyKit = (applySource: string) => hostileKit({ hooks: { APPLY: applySource }, credentials: [{ id: 'git', description: 'token', required: true }] });

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

describe('secret redaction', () => {
  it('blanks a secret that reaches a log line or an error JSON-escaped, once or twice', async () => {
    const kit = applyKit(`function apply(context, kit) {
      console.log(context.credentials);
      kit.log('info', 'obj', { p: context.credentials.git.token });
      console.log({ request: { body: JSON.stringify(context.credentials.git) } });
      throw new Error('push refused: ' + JSON.stringify({ sent: context.credentials.git }));
    }`);
    const result = await runtime.execute(kit, { tenantId: 't', input: exampleInput, openCredential: async () => ({ token: SECRET }) });

    expect(result.logs.map((entry) => entry.message)).toEqual([
      '{"git":{"token":"[redacted]"}}',
      'obj {"p":"[redacted]"}',
      '{"request":{"body":"{\\"token\\":\\"[redacted]\\"}"}}',
    ]);
    expect(result.error).toEqual({
      code: 'HOOK_FAILED',
      phase: 'APPLY',
      message: 'APPLY hook (hooks/apply.js) failed: push refused: {"sent":{"token":"[redacted]"}}',
    });
    const escaped = JSON.stringify(SECRET).slice(1, -1);
    for (const text of stringsIn(result)) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(escaped);
      // Any encoding at all would still carry this tail verbatim.
      expect(text).not.toContain('XYZ-SECRET');
    }
  });

  it('blanks a numeric secret that APPLY hands back, as a number or as text', async () => {
    const kit = applyKit(`function apply(context) {
      var pin = context.credentials.git.pin;
      return { pin: pin, asText: 'pin ' + pin, list: [pin, 1], port: 8080 };
    }`);
    const result = await runtime.execute(kit, { tenantId: 't', input: exampleInput, openCredential: async () => ({ token: SECRET, pin: 987654 }) });
    expect(result.applyResult).toEqual({ pin: '[redacted]', asText: 'pin [redacted]', list: ['[redacted]', 1], port: 8080 });
  });

  it('blanks a secret that cleaning a message would rejoin: split by a control character, or a word per line', async () => {
    const kit = loadOrThrow(
      {
        metadata: { id: 'splitting', displayName: 'Splitting', version: '1.0.0', description: '', author: 'test', kitType: 'file' },
        platform: { name: 'none', category: 'test' },
        phases: ['APPLY', 'VERIFY'],
        outputs: [{ id: 'out', filename: 'out.txt', template: 'out.txt.hbs', outputType: 'text' }],
        discovery: { pools: [] },
        hooks: { APPLY: 'hooks/apply.js', VERIFY: 'hooks/verify.js' },
        credentials: [{ id: 'git', description: 'token', required: true }],
      },
      {
        'out.txt.hbs': 'hello\n',
        'hooks/apply.js': `var t;
        function apply(context, kit) {
          t = context.credentials.git.token;
          kit.log('info', 'soh ' + t.slice(0, 5) + '\\u0001' + t.slice(5));
          kit.log('info', 'words ' + context.credentials.git.passphrase.split(' ').join('\\n'));
          return {};
        }`,
        'hooks/verify.js': `function verify() { return { warnings: ['del ' + t.slice(0, 5) + '\\u007f' + t.slice(5)], errors: ['nul ' + t.slice(0, 5) + '\\u0000' + t.slice(5)] }; }`,
      },
    );
    const result = await runtime.execute(kit, { tenantId: 't', input: exampleInput, openCredential: async () => ({ token: 'ghp_SplitToken123', passphrase: 'correct horse battery staple' }) });

    expect(result.logs.map((entry) => entry.message)).toEqual(['soh [redacted]', 'words [redacted]']);
    expect(result.verifyWarnings).toEqual(['del [redacted]']);
    expect(result.message).toBe('VERIFY: VERIFY failed: nul [redacted]');
  });
});

describe('secret redaction of encoded and case-changed forms', () => {
  // `+`, `/` and `=` are what encodeURIComponent and base64url change.
  const TOKEN = 'ghp_Ab+c/De=Fg9Hk';

  it('blanks a token logged inside a URL, in another letter case, or base64-encoded, and in applyResult', async () => {
    // The isolate has no btoa: a hook that needs base64 brings its own.
    const kit = applyKit(`function b64(text, url) {
      var chars = url ? 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_' : 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      var out = '';
      for (var i = 0; i < text.length; i += 3) {
        var n = (text.charCodeAt(i) << 16) | ((text.charCodeAt(i + 1) || 0) << 8) | (text.charCodeAt(i + 2) || 0);
        out += chars[(n >> 18) & 63] + chars[(n >> 12) & 63] + (i + 1 < text.length ? chars[(n >> 6) & 63] : url ? '' : '=') + (i + 2 < text.length ? chars[n & 63] : url ? '' : '=');
      }
      return out;
    }
    function apply(context, kit) {
      var t = context.credentials.git.token;
      kit.log('info', 'calling https://api.example/x?token=' + encodeURIComponent(t) + '&n=1');
      kit.log('info', 'lower hex ' + encodeURIComponent(t).replace(/%[0-9A-F]{2}/g, function (e) { return e.toLowerCase(); }));
      kit.log('info', 'upper ' + t.toUpperCase() + ' lower ' + t.toLowerCase());
      kit.log('info', 'b64 ' + b64(t) + ' url ' + b64(t, true));
      kit.log('info', 'Authorization: Basic ' + b64('x-access-token:' + t));
      return { url: 'https://h/?t=' + encodeURIComponent(t), shout: t.toUpperCase(), header: 'Basic ' + b64('x:' + t) };
    }`);
    const result = await runtime.execute(kit, { tenantId: 't', input: exampleInput, openCredential: async () => ({ token: TOKEN }) });

    expect(result.logs.map((entry) => entry.message)).toEqual([
      'calling https://api.example/x?token=[redacted]&n=1',
      'lower hex [redacted]',
      'upper [redacted] lower [redacted]',
      'b64 [redacted] url [redacted]',
      // The base64 characters that mix the token's first and last bytes with their neighbours stay.
      expect.stringMatching(/^Authorization: Basic \S{0,40}\[redacted\]\S{0,4}$/),
    ]);
    expect(result.applyResult).toEqual({
      url: 'https://h/?t=[redacted]',
      shout: '[redacted]',
      header: expect.stringMatching(/^Basic \S{0,4}\[redacted\]\S{0,4}$/),
    });
    const forms = [encodeURIComponent(TOKEN), TOKEN.toUpperCase(), Buffer.from(TOKEN).toString('base64'), Buffer.from(TOKEN).toString('base64url')];
    for (const text of stringsIn(result)) for (const form of forms) expect(text).not.toContain(form);
  });
});

describe('secret redaction rules', () => {
  it('leaves values under 4 characters alone, matches 4 to 7 in their own case and longer ones in any', () => {
    const redactor = createSecretRedactor();
    redactor.remember({ pin: '907', word: 'Rose', token: 'tok-Secret-42' });
    // "907" would otherwise vanish from every port, count and date.
    expect(redactor.redact('pin 907, port 9070')).toBe('pin 907, port 9070');
    expect(redactor.redact('Rose rose ROSE')).toBe('[redacted] rose ROSE');
    expect(redactor.redact('TOK-SECRET-42 tok-secret-42')).toBe('[redacted] [redacted]');
    expect(redactor.redact(encodeURIComponent('tok-Secret-42'.toUpperCase()))).toBe('[redacted]');
  });

  it('blanks the whole of two secrets that overlap', () => {
    const redactor = createSecretRedactor();
    redactor.remember({ token: 'abcdef123', other: '123XYZW' });
    expect(redactor.redact('joined abcdef123XYZW.')).toBe('joined [redacted].');
    expect(redactor.redactJson({ abcdef123XYZW: 1234 })).toEqual({ '[redacted]': 1234 });
  });
});
