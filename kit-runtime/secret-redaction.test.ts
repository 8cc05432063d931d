// Long reports of a run that opened a credential are redacted on a thread (secret-redaction.ts):
// the same text as on the calling thread, and never anything unredacted when that thread fails.
// How long the worker's event loop is held meanwhile is measured by bench/secret-redaction.ts.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanGuestMessage, KitPhaseError } from './errors.ts';
import { executeKit } from './execute-kit.ts';
import { failRun, type KitExecutionResult } from './execution-result.ts';
import { createKitRuntime } from './kit-runtime.ts';
import { resolveKitLimits } from './limits.ts';
import { createOutputValidation } from './output-validation.ts';
import { WITHHELD_LOG_MESSAGE } from './sandbox/host-bridge.ts';
import { IsolatePool } from './sandbox/isolate-pool.ts';
import { createRedactionPerformer, createRunRedactor, createSecretRedaction, INLINE_REDACTION_MAX_CHARS, type RedactionRequest } from './secret-redaction.ts';
import { createSecretRedactor } from './secret-redactor.ts';
import { hostileKit } from './test-support/kits.ts';

const SECRET = { token: 'ghp_Redact+Me/Please=42', pin: 987654, pem: '-----BEGIN KEY-----\nAAAAline1xyz\nBBBBline2xyz\n-----END KEY-----' };
const TOKEN_FORMS = [SECRET.token, encodeURIComponent(SECRET.token), SECRET.token.toUpperCase(), Buffer.from(SECRET.token).toString('base64'), 'Redact+Me', 'BBBBline2xyz'];

/** A kit whose APPLY hook is `apply`, needing the `deploy` credential. */
const kitWith = ({ apply }: { apply: string }) => hostileKit({ hooks: { APPLY: apply }, credentials: [{ id: 'deploy', description: 'deploy key', required: true }] });

// Hundreds of kilobytes of base64 with the secret in several forms, at the start, in the middle
// and at the end; the hook builds it from the run's input and the opened credential.
const input = { before: randomBytes(300_000).toString('base64'), after: randomBytes(150_000).toString('base64') };
const LONG_TEXT_HOOK = `function longText(context) {
  var c = context.credentials.deploy;
  return c.token + ' ' + JSON.stringify({ t: c.token }) + ' ' + context.input.before + encodeURIComponent(c.token) + c.pem.split('\\n')[2] + ' pin ' + c.pin + ' ' + context.input.after + c.token.toUpperCase();
}`;
const longText = `${SECRET.token} ${JSON.stringify({ t: SECRET.token })} ${input.before}${encodeURIComponent(SECRET.token)}BBBBline2xyz pin ${SECRET.pin} ${input.after}${SECRET.token.toUpperCase()}`;
const request = { tenantId: 't', input, openCredential: async () => SECRET };

/** What the calling thread's redactor makes of the same secret. */
const inline = createSecretRedactor();
inline.remember(SECRET);

function expectNoSecretIn(value: unknown) {
  const text = JSON.stringify(value);
  for (const form of TOKEN_FORMS) expect(text).not.toContain(form);
  expect(text).not.toContain(String(SECRET.pin));
}

const runtime = createKitRuntime({ limits: { timeoutMs: 10_000 } });
const strict = createKitRuntime({ limits: { timeoutMs: 10_000 }, redaction: { timeoutMs: 1 } });
afterAll(() => {
  runtime.close();
  strict.close();
});

describe('redacting the long reports of a run that opened a credential', () => {
  it('blanks every form of the secret in a long log line, APPLY result and error as the calling thread would, lines kept in order', async () => {
    expect(longText.length).toBeGreaterThan(INLINE_REDACTION_MAX_CHARS);
    const returning = kitWith({
      apply: `${LONG_TEXT_HOOK} function apply(context, kit) {
        var text = longText(context);
        kit.log('info', text);
        kit.log('warn', 'short ' + context.credentials.deploy.token);
        var keyed = {};
        keyed[context.credentials.deploy.token] = text;
        return { uploaded: text, list: [text, context.credentials.deploy.pin], keyed: keyed };
      }`,
    });
    const returned = await runtime.execute(returning, request);

    expect(returned.status).toBe('completed');
    expect(returned.logs).toEqual([
      { phase: 'APPLY', level: 'info', message: cleanGuestMessage(longText, inline.redact) },
      { phase: 'APPLY', level: 'warn', message: 'short [redacted]' },
    ]);
    expect(returned.logs[0]!.message).toMatch(/^\[redacted\] \{"t":"\[redacted\]"\} /);
    expect(returned.applyResult).toEqual(inline.redactJson({ uploaded: longText, list: [longText, SECRET.pin], keyed: { [SECRET.token]: longText } }));
    expect(returned.applyResult).toMatchObject({ list: [expect.any(String), '[redacted]'], keyed: { '[redacted]': expect.any(String) } });
    // Only the secret's forms are blanked: the text around them is all there.
    expect((returned.applyResult as { uploaded: string }).uploaded.length).toBeGreaterThan(input.before.length + input.after.length);
    expectNoSecretIn(returned);

    const throwing = kitWith({ apply: `${LONG_TEXT_HOOK} function apply(context) { throw new Error(longText(context)); }` });
    const thrown = await runtime.execute(throwing, request);
    expect(thrown.error).toEqual({ code: 'HOOK_FAILED', phase: 'APPLY', message: `APPLY hook (hooks/apply.js) failed: ${cleanGuestMessage(longText, inline.redact)}` });
    expectNoSecretIn(thrown);
  });

  it.each([
    ['a long log line', `function apply(context, kit) { kit.log('info', longText(context)); }`],
    ['the APPLY result', `function apply(context) { return { uploaded: longText(context) }; }`],
    ['a long error message', `function apply(context) { throw new Error(longText(context)); }`],
  ])('fails the run, quoting nothing, when redacting %s overruns its time limit', async (_case, apply) => {
    const result = await strict.execute(kitWith({ apply: `${LONG_TEXT_HOOK} ${apply}` }), request);
    expect(result.error).toEqual({ code: 'LIMIT_EXCEEDED', limit: 'time', phase: 'APPLY', message: "redacting secrets from the run's reports took longer than 0.001 s" });
    expect(result.applyResult).toBeNull();
    expect(result.logs.map((entry) => entry.message)).toEqual(_case === 'a long log line' ? [WITHHELD_LOG_MESSAGE] : []);
    expectNoSecretIn(result);
  });

  it.each([
    ['a long log line', `function apply(context, kit) { kit.log('info', longText(context)); }`],
    ['the APPLY result', `function apply(context) { return { uploaded: longText(context) }; }`],
    ['a long error message', `function apply(context) { throw new Error(longText(context)); }`],
  ])('fails the run as an internal error, quoting nothing, when the thread redacting %s dies with the text in its error', async (_case, apply) => {
    const limits = resolveKitLimits({ timeoutMs: 10_000 });
    const internal: unknown[] = [];
    const deps = {
      pool: new IsolatePool(limits),
      limits,
      validation: createOutputValidation(),
      redaction: createSecretRedaction({}, new URL('./test-support/dying-redaction.worker.ts', import.meta.url)),
      hostCallsRunning: new Set<Promise<unknown>>(),
      onInternalError: (error: unknown) => internal.push(error),
    };
    try {
      const result = await executeKit(deps, kitWith({ apply: `${LONG_TEXT_HOOK} ${apply}` }), request);
      expect(result.error).toEqual({ code: 'INTERNAL_ERROR', phase: 'APPLY', message: 'the kit runtime failed internally' });
      expect(result.logs.map((entry) => entry.message)).toEqual(_case === 'a long log line' ? [WITHHELD_LOG_MESSAGE] : []);
      expectNoSecretIn(result);
      // What the worker logs of it: the thread's own error quoted the secret.
      expect(internal).toHaveLength(1);
      expect(internal[0]).toMatchObject({ message: 'redacting secrets failed on its thread' });
      expectNoSecretIn({ message: (internal[0] as Error).message, stack: (internal[0] as Error).stack, cause: (internal[0] as Error).cause });
    } finally {
      deps.pool.close();
      deps.validation.close();
      deps.redaction.close();
    }
  });

  it("takes a run's long texts to the thread one at a time, and none still waiting once the run is over", async () => {
    const performed: RedactionRequest[] = [];
    let finishFirst = () => {};
    const redactor = createRunRedactor({
      perform: (request) => {
        performed.push(request);
        return new Promise((resolve) => (finishFirst = () => resolve('first, redacted')));
      },
      close: () => {},
    });
    redactor.remember(SECRET);
    const first = redactor.redact(longText);
    const waiting = [redactor.reportable(longText), redactor.redactJson({ uploaded: longText }, JSON.stringify({ uploaded: longText }).length)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(performed).toHaveLength(1);

    redactor.close();
    finishFirst();
    await expect(first).resolves.toBe('first, redacted');
    for (const refused of waiting) await expect(refused).rejects.toThrow('the run is over');
    expect(performed).toHaveLength(1);
  });

  it('redacts a short APPLY result where it arrives, and a long one on the thread', async () => {
    const performed: RedactionRequest[] = [];
    const redactor = createRunRedactor({ perform: async (request) => (performed.push(request), 'on the thread'), close: () => {} });
    redactor.remember(SECRET);
    const short = { applied: true, echoed: SECRET.token };
    await expect(redactor.redactJson(short, JSON.stringify(short).length)).resolves.toEqual({ applied: true, echoed: '[redacted]' });
    expect(performed).toEqual([]);
    await expect(redactor.redactJson({ uploaded: longText }, JSON.stringify({ uploaded: longText }).length)).resolves.toBe('on the thread');
    expect(performed).toHaveLength(1);
  });

  it("keeps each run's redactor on the thread, teaching it only the secrets the run opened since, and no other run's", () => {
    const perform = createRedactionPerformer();
    const text = 'first-secret-value and second-secret-value';
    expect(perform({ run: 1, secrets: ['first-secret-value'], task: { redact: text } })).toBe('[redacted] and second-secret-value');
    expect(perform({ run: 1, secrets: ['first-secret-value', 'second-secret-value'], task: { redact: text } })).toBe('[redacted] and [redacted]');
    expect(perform({ run: 2, secrets: ['second-secret-value'], task: { redact: text } })).toBe('first-secret-value and [redacted]');
  });

  it('reports a run whose own error message cannot be redacted with a message that quotes nothing', async () => {
    const result = { status: 'completed', message: null, error: null } as unknown as KitExecutionResult;
    await failRun(result, 'VERIFY', new KitPhaseError(`VERIFY failed: ${longText}`), async () => {
      throw new Error(`could not redact ${longText}`);
    });
    expect(result.error).toEqual({ code: 'PHASE_FAILED', phase: 'VERIFY', message: 'the run failed, and its error message could not be checked for secrets' });
    expect(result.message).toBe('VERIFY: the run failed, and its error message could not be checked for secrets');
  });
});
