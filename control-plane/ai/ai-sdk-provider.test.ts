import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AiConfig } from '../config.ts';
import { AiProviderError, type DraftRequest } from './ai-provider.ts';
import { createAiSdkProvider } from './ai-sdk-provider.ts';
import { countTokens } from './token-count.ts';

const API_KEY = 'sk-test-4f1c0ffee-do-not-leak';
const SYSTEM = 'You draft project plans.';
const PROMPT = 'Plan the kitchen renovation.';
const PLAN_SCHEMA = z.object({ title: z.string(), steps: z.array(z.string()) });
const PLAN = { title: 'Kitchen', steps: ['measure', 'order cabinets'] };
const USAGE = { input: 321, output: 54 };

// ---- a fake model server: records what arrives, answers what the test tells it to -------------

interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
}

/** An answer, or 'hang' for a server that reads the request and never replies. */
type Answer = { status: number; body: unknown; headers?: Record<string, string> } | 'hang';

interface FakeModelServer {
  baseUrl: string;
  received: ReceivedRequest[];
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function startFakeModelServer(answer: (request: ReceivedRequest) => Answer): Promise<FakeModelServer> {
  const received: ReceivedRequest[] = [];
  const server = createServer(async (req, res: ServerResponse) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const request = { path: req.url ?? '', headers: req.headers, body: JSON.parse(text) };
    received.push(request);
    const reply = answer(request);
    if (reply === 'hang') return;
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, received };
}

// ---- the two wire formats, as the providers' real APIs speak them --------------------------------

/** What one provider's API looks like on the wire: enough of it to answer the SDK and check its requests. */
interface Wire {
  provider: 'openai-compatible' | 'anthropic';
  model: string;
  path: string;
  keyHeaderOf(headers: IncomingHttpHeaders): string | undefined;
  systemTextOf(body: Record<string, any>): string;
  userTextOf(body: Record<string, any>): string;
  /** The JSON schema the request told the model to answer in. */
  schemaOf(body: Record<string, any>): { properties?: object } | undefined;
  /** A finished answer whose text is `json`. */
  answer(json: string, request: ReceivedRequest): unknown;
  /** An answer cut off at the token cap. */
  truncated(json: string): unknown;
  error(status: number, message: string): unknown;
}

const openAiWire: Wire = {
  provider: 'openai-compatible',
  model: 'qwen3-32b',
  path: '/v1/chat/completions',
  keyHeaderOf: (headers) => headers.authorization?.replace(/^Bearer /, ''),
  systemTextOf: (body) => body.messages.find((m: any) => m.role === 'system').content,
  userTextOf: (body) => body.messages.find((m: any) => m.role === 'user').content,
  schemaOf: (body) => (body.response_format?.type === 'json_schema' ? body.response_format.json_schema.schema : undefined),
  answer: (json) => chatCompletion(json, 'stop'),
  truncated: (json) => chatCompletion(json, 'length'),
  error: (_status, message) => ({ error: { message, type: 'invalid_request_error', code: null } }),
};

function chatCompletion(content: string, finishReason: string) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: openAiWire.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finishReason }],
    usage: { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output },
  };
}

const anthropicWire: Wire = {
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  path: '/v1/messages',
  keyHeaderOf: (headers) => headers['x-api-key'] as string | undefined,
  systemTextOf: (body) => (typeof body.system === 'string' ? body.system : body.system.map((part: any) => part.text).join('')),
  userTextOf: (body) => body.messages[0].content.map((part: any) => part.text).join(''),
  schemaOf: (body) => body.output_config?.format?.schema ?? body.tools?.find((tool: any) => tool.name === 'json')?.input_schema,
  answer: (json, request) =>
    // Native structured output (output_config.format) answers in text; the SDK's fallback for
    // models without it forces a tool named "json" and reads the tool's input.
    request.body.output_config?.format ? message([{ type: 'text', text: json }], 'end_turn') : message([{ type: 'tool_use', id: 'toolu_1', name: 'json', input: JSON.parse(json) }], 'tool_use'),
  truncated: (json) => message([{ type: 'text', text: json }], 'max_tokens'),
  error: (_status, message) => ({ type: 'error', error: { type: 'authentication_error', message } }),
};

function message(content: unknown[], stopReason: string) {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: anthropicWire.model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: USAGE.input, output_tokens: USAGE.output },
  };
}

// ---- the provider under test ---------------------------------------------------------------------

function aiConfig(wire: Wire, baseUrl: string, callTimeoutMs = 5_000): AiConfig {
  return {
    provider: wire.provider,
    model: wire.model,
    baseUrl,
    apiKey: API_KEY,
    prices: { inputPerMillionUsd: 3, outputPerMillionUsd: 15 },
    maxOutputTokens: 4_096,
    callTimeoutMs,
    defaultBudget: { maxTokens: 100_000, maxCostUsd: 1 },
  };
}

function draftRequest(overrides: Partial<DraftRequest> = {}): DraftRequest {
  return { agent: 'planner', system: SYSTEM, prompt: PROMPT, schema: PLAN_SCHEMA, maxOutputTokens: 777, context: {}, ...overrides };
}

async function draftFailure(promise: Promise<unknown>): Promise<AiProviderError> {
  const error = await promise.then(
    () => expect.fail('the draft succeeded'),
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(AiProviderError);
  return error as AiProviderError;
}

/** Everything a log line could print of an error: message, stack and every cause, as inspect shows them. */
function everythingPrintedOf(error: unknown): string {
  const parts = [inspect(error, { depth: null })];
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    parts.push(String(current), current.message, current.stack ?? '');
  }
  return parts.join('\n');
}

describe.each([openAiWire, anthropicWire])('$provider through the ai SDK', (wire) => {
  it('returns the parsed draft and the usage the provider reported, having sent model, prompt, cap and key', async () => {
    const server = await startFakeModelServer((request) => ({ status: 200, body: wire.answer(JSON.stringify(PLAN), request) }));
    const provider = createAiSdkProvider(aiConfig(wire, server.baseUrl));

    const result = await provider.draft(draftRequest());

    // The model the provider says answered: the fakes name the one asked for.
    expect(result).toEqual({ output: PLAN, finishReason: 'stop', usage: { inputTokens: USAGE.input, outputTokens: USAGE.output }, model: wire.model });
    expect(server.received).toHaveLength(1);
    const [request] = server.received;
    expect(request!.path).toBe(wire.path);
    expect(request!.body.model).toBe(wire.model);
    expect(wire.systemTextOf(request!.body)).toBe(SYSTEM);
    expect(wire.userTextOf(request!.body)).toBe(PROMPT);
    expect(request!.body.max_tokens).toBe(777);
    expect(wire.keyHeaderOf(request!.headers)).toBe(API_KEY);
    // The model was told the schema, not left to guess it from the prompt.
    expect(Object.keys(wire.schemaOf(request!.body)?.properties ?? {})).toEqual(['title', 'steps']);
    expect({ name: provider.name, model: provider.model, prices: provider.prices }).toEqual({ name: wire.provider, model: wire.model, prices: { inputPerMillionUsd: 3, outputPerMillionUsd: 15 } });
    expect(provider.countTokens('hello world')).toBe(2);
  });

  it('gives no output, finish reason length and the spent usage when the model stops at the cap', async () => {
    const server = await startFakeModelServer(() => ({ status: 200, body: wire.truncated('{"title": "Kitchen", "steps": ["meas') }));
    const provider = createAiSdkProvider(aiConfig(wire, server.baseUrl));

    const result = await provider.draft(draftRequest());

    expect(result).toEqual({ output: null, finishReason: 'length', usage: { inputTokens: USAGE.input, outputTokens: USAGE.output }, model: wire.model });
  });

  it('gives finish reason length, not a failure, when the cap was spent before any output began', async () => {
    // A reasoning model can think its whole budget away and write nothing.
    const server = await startFakeModelServer(() => ({ status: 200, body: wire.truncated('') }));
    const provider = createAiSdkProvider(aiConfig(wire, server.baseUrl));

    const result = await provider.draft(draftRequest());

    expect(result).toEqual({ output: null, finishReason: 'length', usage: { inputTokens: USAGE.input, outputTokens: USAGE.output }, model: wire.model });
  });

  it('refuses a 401 as not retryable, and no part of the error holds the key the provider echoed', async () => {
    const server = await startFakeModelServer((request) => ({ status: 401, body: wire.error(401, `Incorrect API key provided: ${wire.keyHeaderOf(request.headers)}`) }));
    const provider = createAiSdkProvider(aiConfig(wire, server.baseUrl));

    const error = await draftFailure(provider.draft(draftRequest()));

    expect(error.retryable).toBe(false);
    expect(error.message).toBe(`${wire.provider} model ${wire.model} answered 401`);
    expect(everythingPrintedOf(error)).not.toContain(API_KEY);
    expect(server.received).toHaveLength(1); // the SDK does not retry a refused key
    expect(wire.keyHeaderOf(server.received[0]!.headers)).toBe(API_KEY); // so the 401 body did echo it
  });

  it('gives up on a 500 as retryable once the SDK has spent its retries', async () => {
    // retry-after-ms (which the SDK honours) keeps the test from waiting out the 2 s + 4 s backoff.
    const server = await startFakeModelServer(() => ({ status: 500, body: wire.error(500, 'internal error'), headers: { 'retry-after-ms': '10' } }));
    const provider = createAiSdkProvider(aiConfig(wire, server.baseUrl));

    const error = await draftFailure(provider.draft(draftRequest()));

    expect(error.retryable).toBe(true);
    expect(error.message).toContain('answered 500');
    expect(server.received).toHaveLength(3); // the first attempt and two retries
  });

  it('refuses output that does not match the schema as not retryable', async () => {
    const server = await startFakeModelServer((request) => ({ status: 200, body: wire.answer(JSON.stringify({ title: 42 }), request) }));
    const provider = createAiSdkProvider(aiConfig(wire, server.baseUrl));

    const error = await draftFailure(provider.draft(draftRequest()));

    expect(error.retryable).toBe(false);
    expect(error.message).toContain('does not match the schema');
  });

  it('gives up on a server that never answers as retryable, within the call timeout', async () => {
    const server = await startFakeModelServer(() => 'hang');
    const provider = createAiSdkProvider(aiConfig(wire, server.baseUrl, 300));

    const started = performance.now();
    const error = await draftFailure(provider.draft(draftRequest()));
    const elapsed = performance.now() - started;

    expect(error.retryable).toBe(true);
    expect(error.message).toBe(`${wire.provider} model ${wire.model} did not answer within 300 ms`);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1_500);
  });

  it('stops at once, not retryable, when the caller cancels', async () => {
    const server = await startFakeModelServer(() => 'hang');
    const provider = createAiSdkProvider(aiConfig(wire, server.baseUrl));
    const caller = new AbortController();

    const failure = draftFailure(provider.draft(draftRequest({ signal: caller.signal })));
    await waitFor(() => server.received.length === 1);
    caller.abort();
    const error = await failure;

    expect(error.retryable).toBe(false);
    expect(error.message).toContain('cancelled');
  });
});

it('drafts through the forced "json" tool with an Anthropic model that lacks native structured output', async () => {
  const wire = { ...anthropicWire, model: 'claude-sonnet-4-20250514' };
  const server = await startFakeModelServer((request) => ({ status: 200, body: wire.answer(JSON.stringify(PLAN), request) }));
  const provider = createAiSdkProvider(aiConfig(wire, server.baseUrl));

  const result = await provider.draft(draftRequest());

  // The fake answers as claude-sonnet-4-5: what the provider says answered is what a call records.
  expect(result).toEqual({ output: PLAN, finishReason: 'stop', usage: { inputTokens: USAGE.input, outputTokens: USAGE.output }, model: anthropicWire.model });
  const [request] = server.received;
  expect(request!.body.output_config).toBeUndefined();
  // "any" tool, and "json" is the only one: the model must answer through it.
  expect(request!.body.tool_choice).toMatchObject({ type: 'any' });
  expect(request!.body.tools.map((tool: { name: string }) => tool.name)).toEqual(['json']);
  expect(Object.keys(wire.schemaOf(request!.body)?.properties ?? {})).toEqual(['title', 'steps']);
});

it('counts the tokens itself when an OpenAI-compatible server reports no usage, rather than recording a free call', async () => {
  const withoutUsage = ({ usage: _usage, ...body }: ReturnType<typeof chatCompletion>) => body;
  const answered = await startFakeModelServer(() => ({ status: 200, body: withoutUsage(chatCompletion(JSON.stringify(PLAN), 'stop')) }));
  const cut = await startFakeModelServer(() => ({ status: 200, body: withoutUsage(chatCompletion('{"title": "Kit', 'length')) }));

  const whole = await createAiSdkProvider(aiConfig(openAiWire, answered.baseUrl)).draft(draftRequest());
  const truncated = await createAiSdkProvider(aiConfig(openAiWire, cut.baseUrl)).draft(draftRequest());

  const promptTokens = countTokens(`${SYSTEM}\n\n${PROMPT}`);
  expect(whole).toEqual({ output: PLAN, finishReason: 'stop', usage: { inputTokens: promptTokens, outputTokens: countTokens(JSON.stringify(PLAN)) }, model: openAiWire.model });
  // Cut off at the cap: the cap was spent.
  expect(truncated).toEqual({ output: null, finishReason: 'length', usage: { inputTokens: promptTokens, outputTokens: 777 }, model: openAiWire.model });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}
