import { afterAll, describe, expect, it } from 'vitest';
import { createKitRuntime } from './kit-runtime.ts';
import { exampleInput, loadOrThrow } from './test-support/kits.ts';

const runtime = createKitRuntime({ limits: { timeoutMs: 3000 } });
afterAll(() => runtime.close());

// A quote, a backslash and a tab: each one JSON.stringify escapes.
const SECRET = 'pa"ss\\w0rd\tXYZ-SECRET';

function applyKit(applySource: string) {
  return loadOrThrow(
    {
      metadata: { id: 'leaky', displayName: 'Leaky', version: '1.0.0', description: '', author: 'test', kitType: 'file' },
      platform: { name: 'none', category: 'test' },
      phases: ['APPLY'],
      outputs: [{ id: 'out', filename: 'out.txt', template: 'out.txt.hbs', outputType: 'text' }],
      discovery: { pools: [] },
      hooks: { APPLY: 'hooks/apply.js' },
      credentials: [{ id: 'git', description: 'token', required: true }],
    },
    { 'out.txt.hbs': 'hello\n', 'hooks/apply.js': applySource },
  );
}

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
});
