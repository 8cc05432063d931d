import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../control-plane/config.ts';

/** AI_* and AGENT_*: a start that cannot draft is refused, naming the variable and never the key. */
const KEY = 'sk-test-9d2e51aa-never-echoed';
const openAi = { AI_PROVIDER: 'openai-compatible', AI_MODEL: 'gpt-4o-mini', AI_API_KEY: KEY, AI_BASE_URL: 'https://api.openai.com/v1' };

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).not.toContain(KEY);
    expect(message).not.toContain(KEY.slice(8));
    return message;
  }
  return expect.fail(`accepted ${JSON.stringify(env)}`);
}

describe('AI configuration', () => {
  it('reads a real provider whole, and the offline one by default', () => {
    expect(loadConfig(openAi).ai).toMatchObject({ provider: 'openai-compatible', model: 'gpt-4o-mini', apiKey: KEY, baseUrl: 'https://api.openai.com/v1' });
    expect(loadConfig({ AI_PROVIDER: 'anthropic', AI_MODEL: 'claude-sonnet-4-5', AI_API_KEY: KEY }).ai).toMatchObject({ provider: 'anthropic', baseUrl: undefined });
    expect(loadConfig({}).ai).toMatchObject({ provider: 'offline', prices: { inputPerMillionUsd: 0, outputPerMillionUsd: 0 }, maxOutputTokens: 16_384 });
    // Named offline on purpose: a real provider's settings may stay behind.
    expect(loadConfig({ ...openAi, AI_PROVIDER: 'offline' }).ai.provider).toBe('offline');
  });

  it.each([
    [{ AI_PROVIDER: 'openai' }, 'AI_PROVIDER'],
    [{ ...openAi, AI_PROVIDER: 'OpenAI-compatible' }, 'AI_PROVIDER'],
    [{ ...openAi, AI_MODEL: '' }, 'AI_MODEL'],
    [{ AI_PROVIDER: 'anthropic', AI_API_KEY: KEY }, 'AI_MODEL'],
    [{ AI_PROVIDER: 'anthropic', AI_MODEL: 'claude-sonnet-4-5' }, 'AI_API_KEY'],
    [{ ...openAi, AI_API_KEY: '' }, 'AI_API_KEY'],
    [{ ...openAi, AI_API_KEY: '   ' }, 'AI_API_KEY'],
    [{ ...openAi, AI_API_KEY: `${KEY}\r` }, 'AI_API_KEY'],
    [{ ...openAi, AI_BASE_URL: '' }, 'AI_BASE_URL'],
    [{ ...openAi, AI_BASE_URL: KEY }, 'AI_BASE_URL'],
    [{ ...openAi, AI_BASE_URL: 'ftp://models.example.com/v1' }, 'AI_BASE_URL'],
    [{ ...openAi, AI_PRICE_INPUT_PER_MILLION_USD: '-1' }, 'AI_PRICE_INPUT_PER_MILLION_USD'],
    [{ ...openAi, AI_PRICE_OUTPUT_PER_MILLION_USD: 'cheap' }, 'AI_PRICE_OUTPUT_PER_MILLION_USD'],
    [{ ...openAi, AI_PRICE_OUTPUT_PER_MILLION_USD: '1e3' }, 'AI_PRICE_OUTPUT_PER_MILLION_USD'],
    [{ ...openAi, AI_MAX_OUTPUT_TOKENS: '0' }, 'AI_MAX_OUTPUT_TOKENS'],
    [{ ...openAi, AI_MAX_OUTPUT_TOKENS: '2.5' }, 'AI_MAX_OUTPUT_TOKENS'],
    [{ ...openAi, AI_CALL_TIMEOUT_MS: '0' }, 'AI_CALL_TIMEOUT_MS'],
    [{ ...openAi, AGENT_DEFAULT_MAX_TOKENS: '0' }, 'AGENT_DEFAULT_MAX_TOKENS'],
    [{ ...openAi, AGENT_DEFAULT_MAX_COST_USD: '-5' }, 'AGENT_DEFAULT_MAX_COST_USD'],
  ])('refuses %j naming %s', (env, name) => {
    expect(refusal(env)).toMatch(new RegExp(`^Invalid configuration:\\n(  .*\\n)*  ${name}: `));
  });

  it.each([
    ['a user name and password', `https://user:${KEY}@models.example.com/v1`],
    ['a query', `https://models.example.com/v1?api-key=${KEY}`],
    ['an empty query', 'https://models.example.com/v1?'],
    ['a fragment', `https://models.example.com/v1#${KEY}`],
  ])('refuses an AI_BASE_URL with %s, which every call would fail on, without echoing it', (_what, url) => {
    const message = refusal({ ...openAi, AI_BASE_URL: url });
    expect(message).toMatch(/AI_BASE_URL: must be a plain http\(s\) URL/);
    expect(message).not.toContain('models.example.com');
  });

  it("refuses a real provider's settings with no AI_PROVIDER, which would quietly draft offline", () => {
    const { AI_PROVIDER: _unset, ...withoutProvider } = openAi;
    expect(refusal(withoutProvider)).toMatch(/AI_PROVIDER: is unset, so agents would draft offline although AI_MODEL, AI_API_KEY, AI_BASE_URL are set/);
    expect(refusal({ AI_API_KEY: KEY })).toMatch(/AI_PROVIDER: is unset, so agents would draft offline although AI_API_KEY is set/);
  });
});
