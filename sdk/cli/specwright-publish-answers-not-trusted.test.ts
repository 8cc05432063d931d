/**
 * `kit publish` reads what came back as someone else's until it is the service's own answer: a 201
 * that does not hold the published version is no success, a redirect is named (and not followed),
 * and what a server wrote into its problems reaches the terminal one line each, without escapes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliInProcess as cli } from './test-support/cli-in-process.ts';
import { startKitPublishServer, type KitPublishServer } from './test-support/kit-publish-server.ts';

let work: string;
let dir: string;
let registry: KitPublishServer;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'specwright-answers-'));
  registry = await startKitPublishServer();
  dir = join(work, 'answered-kit');
  expect((await cli(['kit', 'init', dir])).code).toBe(0);
});
afterAll(async () => {
  await registry.close();
  await rm(work, { recursive: true, force: true });
});

async function publishAnswered(answer: KitPublishServer['forcedAnswer'], extra: string[] = []) {
  registry.forcedAnswer = answer;
  try {
    return await cli(['kit', 'publish', dir, '--url', registry.url, '--api-key', registry.apiKey, '--org', registry.orgId, ...extra]);
  } finally {
    registry.forcedAnswer = null;
  }
}

describe('an answer of 201 without the published version', () => {
  it('is not reported as published (exit 1, BAD_RESPONSE), in text and in --json', async () => {
    const answer = { status: 201, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ success: true, data: { id: 'x' } }) };
    const text = await publishAnswered(answer);
    expect(text.code).toBe(1);
    expect(text.out).toEqual([]);
    expect(text.err.at(-1)).toBe(`specwright: publish failed: ${registry.url} answered HTTP 201 without the published version; --url should be the service's base URL (https://host[:port], without /api or /trpc) [BAD_RESPONSE 201]`);
    const json = await publishAnswered(answer, ['--json']);
    expect(json.code).toBe(1);
    expect(json.out).toHaveLength(1);
    expect(JSON.parse(json.out[0] as string)).toMatchObject({ ok: false, error: { code: 'BAD_RESPONSE', status: 201 } });
  });
});

describe('a redirect', () => {
  it('names where it points (by origin) and says it is not followed, whatever its body', async () => {
    for (const body of ['', JSON.stringify({ success: false, error: { code: 'NOT_FOUND', message: 'moved' } })]) {
      const result = await publishAnswered({ status: 302, headers: { Location: 'https://sso.example.com/login?next=/api/x&token=abc' }, body });
      expect(result.code).toBe(1);
      expect(result.err.at(-1)).toBe(
        `specwright: publish failed: ${registry.url} answered HTTP 302, a redirect to https://sso.example.com, which publish does not follow (it would take the API key along); --url should be the service's own base URL [BAD_RESPONSE 302]`,
      );
    }
  });
});

describe("what a server wrote into its refusal", () => {
  it('is printed one line per problem, without line breaks or terminal escape sequences', async () => {
    const refusal = {
      success: false,
      error: {
        code: 'VALIDATION_ERROR',
        message: 'The kit package is invalid\u001b[2J',
        details: { problems: [{ file: 'templates/a.hbs', line: 'x', message: 'first\nsecond\u001b]0;owned\u0007' }], issues: [{ field: 'files.b.hbs', issue: 'bad\r\nworse' }] },
      },
    };
    const result = await publishAnswered({ status: 400, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(refusal) });
    expect(result.code).toBe(1);
    const printed = result.err.slice(-3);
    expect(printed).toEqual(['templates/a.hbs: first second ]0;owned', 'b.hbs: bad worse', 'specwright: publish failed: The kit package is invalid [2J [VALIDATION_ERROR 400]']);
    for (const line of printed) expect(line).not.toMatch(/[\u0000-\u001f]/);
  });

  it('with a code that is not a catalog code is not taken as the service\'s answer', async () => {
    const result = await publishAnswered({ status: 400, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ success: false, error: { code: 'X\n\u001b[31mY', message: 'no' } }) });
    expect(result.code).toBe(1);
    expect(result.err.at(-1)).toBe(`specwright: publish failed: ${registry.url} answered HTTP 400 with a body that is not a Specwright response; --url should be the service's base URL (https://host[:port], without /api or /trpc) [BAD_RESPONSE 400]`);
  });
});

describe('a refusal that repeats the API key (a gateway echoing the request)', () => {
  it('never shows the key, in its message or its problems, in text or in --json', async () => {
    const echo = {
      success: false,
      error: { code: 'UNAUTHORIZED', message: `key ${registry.apiKey} is not known here`, details: { problems: [{ file: 'kit.json', message: `sent with X-API-Key: ${registry.apiKey}` }] } },
    };
    const answer = { status: 401, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(echo) };
    const text = await publishAnswered(answer);
    expect(text.code).toBe(1);
    expect(text.err.slice(-2)).toEqual(['kit.json: sent with X-API-Key: (the API key)', 'specwright: publish failed: key (the API key) is not known here [UNAUTHORIZED 401]']);
    const json = await publishAnswered(answer, ['--json']);
    expect(json.out).toHaveLength(1);
    expect(JSON.parse(json.out[0] as string)).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED', message: 'key (the API key) is not known here' } });
    for (const result of [text, json]) expect([...result.out, ...result.err].join('\n')).not.toContain(registry.apiKey);
  });
});
