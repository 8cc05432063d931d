// Benchmark: how long a kit run that opened a credential holds the worker's event loop while its
// reports are redacted. An APPLY hook hands back 8 MiB (the most one hook result may hold) of
// base64-like text — as its result, as an error message, and as 8 log lines of 1 MiB — and the
// longest pause of a 1 ms interval timer on this thread is taken while the run goes. The secret is
// one at the bound (CREDENTIAL_SECRET_BOUND: 64 values in 16 KiB of JSON): a service account's
// 4096-bit PEM key (each of its lines remembered too) and tokens. Two baselines, from the same run:
// - the same run with no credential opened, in which redaction has nothing to look for: what is left
//   is the run's other work on this thread (copying, parsing and cleaning the hook's answer), a
//   pause of 5–30 ms. Target: ≤ 3× (it was 10–14× while redaction ran here);
// - redacting the same text on this thread, as every run did before redaction moved to a thread of
//   its own (secret-redaction.ts). Target: ≤ 0.5× (it was 0.8–1.5× while redaction ran here).
//
//   node --no-node-snapshot bench/secret-redaction.ts
import { cleanGuestMessage } from '../kit-runtime/errors.ts';
import { createKitRuntime } from '../kit-runtime/kit-runtime.ts';
import { CREDENTIAL_SECRET_BOUND } from '../kit-runtime/sealed-credentials.ts';
import { createSecretRedactor } from '../kit-runtime/secret-redactor.ts';
import { hostileKit } from '../kit-runtime/test-support/kits.ts';
import { atMost, median, medianMs, report } from './measure.ts';

const TEXT_CHARS = 8 * 1024 * 1024 - 64 * 1024; // the hook's answer carries JSON around it
const LOG_LINE_CHARS = 1024 * 1024 - 64; // one host call's argument holds at most 1 MiB
const RUNS = 5;

// Pseudo-random base64 made in the isolate (it has no btoa), the same text on every run.
const guestText = `function text(chars) {
  var alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', seed = 7, chunk = '';
  for (var i = 0; i < 65536; i++) { seed = (seed * 1103515245 + 12345) & 0x7fffffff; chunk += alphabet[seed % 64]; }
  return chunk.repeat(Math.ceil(chars / 65536)).slice(0, chars);
}`;
const text = new Function(`${guestText} return text;`)() as (chars: number) => string;
const LOG_LINES = 8;
const [uploaded, logLine] = [text(TEXT_CHARS), text(LOG_LINE_CHARS)];

/** Each case: the APPLY hook, and the same redaction done on this thread with `redact`. */
const cases = {
  result: {
    hook: `${guestText} function apply() { return { uploaded: text(${TEXT_CHARS}) }; }`,
    onThisThread: (redactor: ReturnType<typeof createSecretRedactor>) => redactor.redactJson({ uploaded }),
  },
  error: {
    hook: `${guestText} function apply() { throw new Error('upload refused: ' + text(${TEXT_CHARS})); }`,
    onThisThread: (redactor: ReturnType<typeof createSecretRedactor>) => cleanGuestMessage(`upload refused: ${uploaded}`, redactor.redact),
  },
  logs: {
    hook: `${guestText} function apply(context, kit) { var line = text(${LOG_LINE_CHARS}); for (var i = 0; i < ${LOG_LINES}; i++) kit.log('info', line); return {}; }`,
    onThisThread: (redactor: ReturnType<typeof createSecretRedactor>) => {
      for (let i = 0; i < LOG_LINES; i += 1) cleanGuestMessage(logLine, redactor.redact);
    },
  },
};

const kitWithApply = (source: string) => hostileKit({ hooks: { APPLY: source }, credentials: [{ id: 'deploy', description: 'deploy key', required: false }] });

/** A secret at the bound: a 4096-bit PEM key (as a service account holds it) and tokens, 64 values. */
function secretAtTheBound(): Record<string, unknown> {
  let seed = 11;
  const chars = (n: number) => Array.from({ length: n }, () => ((seed = (seed * 48271) % 2147483647), 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[seed % 64])).join('');
  const pem = `-----BEGIN PRIVATE KEY-----\n${Array.from({ length: 50 }, () => chars(64)).join('\n')}\n-----END PRIVATE KEY-----\n`;
  const secret: Record<string, unknown> = { type: 'service_account', private_key: pem, client_email: 'deployer@example.iam.gserviceaccount.com' };
  for (let i = 0; Object.keys(secret).length < CREDENTIAL_SECRET_BOUND.values; i += 1) secret[`token${i}`] = `tok_${chars(170)}`;
  const bytes = Buffer.byteLength(JSON.stringify(secret));
  if (bytes > CREDENTIAL_SECRET_BOUND.bytes) throw new Error(`the benchmark secret holds ${bytes} bytes, over the bound`);
  return secret;
}

/** Runs `work`, returning the longest pause between ticks of a 1 ms interval on this thread meanwhile. */
async function longestPauseMs<T>(work: () => Promise<T>): Promise<{ pauseMs: number; value: T }> {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    const value = await work();
    return { pauseMs: Math.max(longest, performance.now() - last), value };
  } finally {
    clearInterval(ticker);
  }
}

const runtime = createKitRuntime({ limits: { timeoutMs: 60_000 } });
const secret = secretAtTheBound();
const raw: Record<string, unknown> = { textChars: TEXT_CHARS, secretValues: CREDENTIAL_SECRET_BOUND.values, secretBytes: Buffer.byteLength(JSON.stringify(secret)) };
const checks = [];
try {
  const redactor = createSecretRedactor();
  redactor.remember(secret);
  for (const [name, { hook, onThisThread }] of Object.entries(cases)) {
    const kit = kitWithApply(hook);
    const run = async (opened: Record<string, unknown> | null) => {
      const { pauseMs, value: result } = await longestPauseMs(() => runtime.execute(kit, { tenantId: 'bench', input: {}, openCredential: async () => opened }));
      if (opened !== null && JSON.stringify(result).includes(String(secret.token0))) throw new Error('a secret was left in the result');
      if (name !== 'error' && result.status !== 'completed') throw new Error(`${name}: ${result.message}`);
      return pauseMs;
    };
    await run(secret); // warm-up: isolates, threads, compiled code
    await run(null);
    const withSecret: number[] = [];
    const without: number[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      withSecret.push(await run(secret));
      without.push(await run(null));
    }
    onThisThread(redactor);
    const onThisThreadMs = await medianMs(RUNS, () => onThisThread(redactor));
    raw[name] = { longestPauseWithSecretMs: median(withSecret), longestPauseWithoutMs: median(without), redactingOnThisThreadMs: onThisThreadMs, samplesWithSecretMs: withSecret, samplesWithoutMs: without };
    checks.push(
      atMost(`${name}: longest event-loop pause, secret at the bound vs none opened`, median(withSecret) / median(without), 3),
      atMost(`${name}: longest event-loop pause, secret at the bound vs redacting the same on this thread`, median(withSecret) / onThisThreadMs, 0.5),
    );
  }
} finally {
  runtime.close();
}
await report('secret-redaction', checks, raw);
