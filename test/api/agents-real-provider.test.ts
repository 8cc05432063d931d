import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens } from '../../control-plane/ai/token-count.ts';
import { flowWalker } from '../helpers/flow-walk.ts';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { recordedResponses } from '../helpers/response-log.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The whole service (API and worker) drafting with a real provider: AI_PROVIDER=openai-compatible
 * against a local server that speaks OpenAI's chat completions. It answers each call with JSON made
 * from the call's own response_format schema, or with whatever failure a test asks of it; the key
 * it is sent must then be found nowhere the service writes.
 */
const API_KEY = `sk-test-${randomBytes(16).toString('hex')}`;
const MODEL = 'm';
const IN_PRICE = 1;
const OUT_PRICE = 4;

interface ChatRequest {
  key: string | undefined;
  system: string;
  user: string;
  maxTokens: number;
  schema: Record<string, any> | undefined;
  /** The prompt as the service counts it (o200k_base). */
  countedInput: number;
}

type Reply = { status: number; body: unknown; headers?: Record<string, string> };
let answer: (request: ChatRequest) => Reply = () => ({ status: 500, body: { error: { message: 'no behaviour set' } } });
const received: ChatRequest[] = [];
let server: Server;

/** A value the schema accepts, every string naming where it is, so the stored spec shows what the model wrote. */
function instanceOf(schema: Record<string, any>, root: Record<string, any>, path: string): unknown {
  if (schema.$ref) return instanceOf(root.$defs?.[schema.$ref.split('/').pop()] ?? root.definitions?.[schema.$ref.split('/').pop()], root, path);
  if (schema.anyOf) return instanceOf(schema.anyOf.find((option: any) => option.type !== 'null') ?? schema.anyOf[0], root, path);
  if (schema.enum) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, value]) => [key, instanceOf(value as any, root, `${path}.${key}`)]));
    case 'array':
      return [instanceOf(schema.items ?? {}, root, `${path}[0]`)];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return `model wrote ${path}`;
  }
}

function completion(content: string, finishReason: string, usage: unknown, model = MODEL) {
  return { id: 'chatcmpl-1', object: 'chat.completion', created: 1_700_000_000, model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finishReason }], ...(usage === undefined ? {} : { usage }) };
}

const USAGE_EXTRA = 7;
/** A well-behaved model: JSON for the schema, and usage a little above the service's own count (so the test can tell whose it is). */
const wellBehaved = (request: ChatRequest): Reply => ({
  status: 200,
  body: completion(JSON.stringify(instanceOf(request.schema!, request.schema!, '$')), 'stop', { prompt_tokens: request.countedInput + USAGE_EXTRA, completion_tokens: 50, total_tokens: request.countedInput + USAGE_EXTRA + 50 }),
});

let app: TestApp;
let apiKey: string;
let walk: ReturnType<typeof flowWalker>;
const stderrWrites: string[] = [];
const processWarnings: string[] = [];
const restoreStreams: Array<() => void> = [];

const post = (path: string, body: unknown) => call(app.url, `/api${path}`, { apiKey, body });
const get = (path: string) => call(app.url, `/api${path}`, { apiKey });
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

async function settled(executionId: string, timeoutMs = 40_000) {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(100)) {
    const response = await get(`/agents/execution/${executionId}/status`);
    expect(response.status, response.text).toBe(200);
    if (response.body.data.status !== 'running') return response.body.data;
  }
  throw new Error('the agent execution did not settle');
}

async function generate(projectId: string, options?: Record<string, unknown>, timeoutMs?: number) {
  const started = await post('/agents/generate-spec', { projectId, ...(options ? { options } : {}) });
  expect(started.status, started.text).toBe(202);
  return settled(started.body.data.executionId, timeoutMs);
}

/** The execution's job, if one is left: waiting to run, or kept failed. */
const jobOf = async (executionId: string) => (await sqlAsOwner(`select attempts, max_attempts, last_error, run_at, locked_at from graphile_worker.jobs where key = $1`, [`agent-execution:${executionId}`]))[0];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const body = JSON.parse(text);
    const system = body.messages.find((m: any) => m.role === 'system')?.content ?? '';
    const user = body.messages.find((m: any) => m.role === 'user')?.content ?? '';
    const request: ChatRequest = {
      key: req.headers.authorization?.replace(/^Bearer /, ''),
      system,
      user,
      maxTokens: body.max_tokens,
      schema: body.response_format?.json_schema?.schema,
      countedInput: countTokens(`${system}\n\n${user}`),
    };
    received.push(request);
    const reply = answer(request);
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  // What the process writes outside its logger (the SDK's warnings, a stray console.error).
  for (const stream of [process.stderr, process.stdout]) {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      stderrWrites.push(String(chunk));
      return (write as any)(chunk, ...rest);
    }) as typeof stream.write;
    restoreStreams.push(() => (stream.write = write));
  }
  const onWarning = (warning: Error) => processWarnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  restoreStreams.push(() => process.off('warning', onWarning));

  app = await startTestApp({
    mode: 'all',
    env: {
      WORKER_HEARTBEAT_MS: '500',
      RATE_LIMIT_AGENT_PER_MINUTE: '5000',
      AI_PROVIDER: 'openai-compatible',
      AI_MODEL: MODEL,
      AI_API_KEY: API_KEY,
      AI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      AI_CALL_TIMEOUT_MS: '10000',
      AI_MAX_OUTPUT_TOKENS: '2000',
      AI_PRICE_INPUT_PER_MILLION_USD: String(IN_PRICE),
      AI_PRICE_OUTPUT_PER_MILLION_USD: String(OUT_PRICE),
    },
  });
  apiKey = app.bootstrap.apiKey;
  walk = flowWalker(app, apiKey, app.bootstrap.organizationId);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  for (const restore of restoreStreams.splice(0)) restore();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe('agents with an OpenAI-compatible provider', () => {
  it('complete an execution, record the usage the provider reported, and store the sections the model wrote', async () => {
    answer = wellBehaved;
    const projectId = await walk.finishedProject('Real provider clinic');
    const before = received.length;
    const execution = await generate(projectId);

    expect(execution).toMatchObject({ status: 'completed', error: null, progress: { completedSteps: 5, totalSteps: 5 } });
    const sent = received.slice(before);
    expect(sent).toHaveLength(5);
    for (const request of sent) expect(request.key).toBe(API_KEY);
    expect(execution.calls.map((c: any) => [c.agent, c.provider, c.model, c.finishReason])).toEqual(
      ['analyst', 'architect', 'api-designer', 'qa-engineer', 'designer'].map((agent) => [agent, 'openai-compatible', MODEL, 'stop']),
    );
    // The provider's count, not the service's own estimate of the prompt.
    expect(execution.calls.map((c: any) => [c.inputTokens, c.outputTokens])).toEqual(sent.map((r) => [r.countedInput + USAGE_EXTRA, 50]));
    for (const c of execution.calls) expect(c.costUSD).toBeCloseTo((c.inputTokens * IN_PRICE + c.outputTokens * OUT_PRICE) / 1e6, 9);
    expect(execution.budget.tokensUsed).toBe(execution.calls.reduce((sum: number, c: any) => sum + c.inputTokens + c.outputTokens, 0));

    // The stored specification holds, section by section, what the model answered.
    const stored = await get(`/specification/${execution.result.specId}`);
    expect(stored.status).toBe(200);
    const spec = stored.body.data.spec;
    for (const request of sent) {
      const written = instanceOf(request.schema!, request.schema!, '$') as Record<string, unknown>;
      for (const [section, value] of Object.entries(written)) expect(spec[section]).toEqual(value);
    }
    expect(spec.overview.name).toBe('model wrote $.overview.name');
    expect(spec.metadata.generator).toBe(`specwright-agents/1 (openai-compatible/${MODEL}, sequential)`);
  }, 120_000);

  it('record the model version the provider says answered', async () => {
    answer = (request) => ({ ...wellBehaved(request), body: { ...(wellBehaved(request).body as object), model: `${MODEL}-2026-11-01` } });
    const execution = await generate(await walk.finishedProject('Dated model'), { agents: ['designer'] });
    expect(execution.calls.map((c: any) => [c.provider, c.model])).toEqual([['openai-compatible', `${MODEL}-2026-11-01`]]);
  }, 60_000);

  it('fail agent_error with a checkpoint when the model answers JSON the schema refuses: no 500, no job left', async () => {
    answer = (request) => ({ status: 200, body: completion(JSON.stringify({ designSystem: 42 }), 'stop', { prompt_tokens: request.countedInput, completion_tokens: 9, total_tokens: request.countedInput + 9 }) });
    const projectId = await walk.finishedProject('Schema refused');
    const execution = await generate(projectId, { agents: ['designer'] });

    expect(execution.status).toBe('failed');
    expect(execution.error).toEqual({ code: 'agent_error', message: `openai-compatible model ${MODEL} answered output that does not match the schema`, checkpoint: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(await jobOf(execution.executionId)).toBeUndefined();
    // The answer was written, and is paid for: the call is on record with the tokens the provider reported.
    expect(execution.calls).toEqual([expect.objectContaining({ finishReason: 'error', outputTokens: 9 })]);
    expect(execution.budget.tokensUsed).toBe(execution.calls[0].inputTokens + 9);
  }, 60_000);

  it('fail agent_error at once on a 401, the key echoed in its body, without retrying', async () => {
    answer = (request) => ({ status: 401, body: { error: { message: `Incorrect API key provided: ${request.key}`, type: 'invalid_request_error', code: 'invalid_api_key' } } });
    const projectId = await walk.finishedProject('Refused key');
    const before = received.length;
    const execution = await generate(projectId, { agents: ['designer'] });

    expect(execution.status).toBe('failed');
    expect(execution.error).toMatchObject({ code: 'agent_error', message: `openai-compatible model ${MODEL} answered 401` });
    expect(received.length - before).toBe(1);
    expect(await jobOf(execution.executionId)).toBeUndefined();
  }, 60_000);

  it('retry a run that meets 500s (echoing key and prompt) as a job, then fail it agent_error with a checkpoint', async () => {
    answer = (request) => ({ status: 500, body: { error: { message: `upstream failed for key ${request.key} on prompt ${request.system} ${request.user}` } }, headers: { 'retry-after-ms': '10' } });
    const projectId = await walk.finishedProject('Flaky provider');
    const before = received.length;
    const execution = await generate(projectId, { agents: ['designer'] }, 60_000);

    expect(execution.status).toBe('failed');
    expect(execution.error).toMatchObject({ code: 'agent_error', message: expect.stringContaining('failed 3 times'), checkpoint: expect.any(String) });
    // Three job attempts, each the first call and the SDK's two retries.
    expect(received.length - before).toBe(9);
    const job = await jobOf(execution.executionId);
    expect(job).toMatchObject({ attempts: 3, max_attempts: 3, locked_at: null });
    expect(job.last_error).toContain('answered 500');
    const failures = app.logLines.filter((line) => line.executionId === execution.executionId && line.component === 'worker' && line.err);
    expect(failures.length).toBeGreaterThanOrEqual(3);
  }, 90_000);

  it('fail budget_exceeded when the model stops at the cap the budget set', async () => {
    answer = wellBehaved;
    const projectId = await walk.finishedProject('Tight budget');
    const full = await generate(projectId, { agents: ['designer'] });
    const counted = received.at(-1)!.countedInput;
    answer = (request) => ({ status: 200, body: completion('{"designSystem": {"vis', 'length', { prompt_tokens: request.countedInput, completion_tokens: request.maxTokens, total_tokens: request.countedInput + request.maxTokens }) });

    const cut = await generate(projectId, { agents: ['designer'], budget: { maxTokens: counted + 5 } });

    expect(full.status).toBe('completed');
    expect(received.at(-1)!.maxTokens).toBe(5);
    expect(cut.status).toBe('failed');
    expect(cut.error).toMatchObject({ code: 'budget_exceeded', message: expect.stringContaining('cut off at 5 tokens') });
    expect(cut.calls).toEqual([expect.objectContaining({ finishReason: 'length', inputTokens: counted, outputTokens: 5 })]);
    expect(cut.budget.tokensUsed).toBe(counted + 5);
  }, 60_000);

  it('count the tokens of a provider that reports no usage, so the budget still binds', async () => {
    answer = (request) => ({ status: 200, body: completion(JSON.stringify(instanceOf(request.schema!, request.schema!, '$')), 'stop', undefined) });
    const projectId = await walk.finishedProject('No usage reported');
    const execution = await generate(projectId, { agents: ['designer'] });

    expect(execution.status).toBe('completed');
    const [only] = execution.calls;
    const request = received.at(-1)!;
    expect(only.inputTokens).toBe(request.countedInput);
    expect(only.outputTokens).toBe(countTokens(JSON.stringify(instanceOf(request.schema!, request.schema!, '$'))));
    expect(execution.budget.tokensUsed).toBe(only.inputTokens + only.outputTokens);
  }, 60_000);

  it('leave the key nowhere: logs, responses, jobs, agent rows, the process output; the prompt is not logged either', async () => {
    const systemPrompt = received.find((r) => r.system.startsWith('You are the designer'))!.system;
    const places = {
      log: app.rawLog.join('\n'),
      // Every body a server in this process wrote, but the fake provider's own (its 401 echoes the key).
      responses: recordedResponses.filter((r) => !r.path.includes('/v1/chat/completions')).map((r) => r.text).join('\n'),
      jobs: JSON.stringify(await sqlAsOwner('select * from graphile_worker.jobs')),
      agentCalls: JSON.stringify(await sqlAsOwner('select * from agent_calls')),
      agentExecutions: JSON.stringify(await sqlAsOwner('select * from agent_executions')),
      processOutput: stderrWrites.join('') + processWarnings.join('\n'),
    };
    // The failures were searched, not absent.
    expect(places.jobs).toContain('answered 500');
    expect(places.responses).toContain('answered 401');
    for (const [place, text] of Object.entries(places)) {
      expect(text.includes(API_KEY), `the key is in ${place}`).toBe(false);
      expect(text.includes(API_KEY.slice(8)), `part of the key is in ${place}`).toBe(false);
    }
    expect(places.log.includes(systemPrompt.slice(0, 60)), 'the prompt is in the log').toBe(false);
    expect(places.log.includes('upstream failed'), "the provider's error body is in the log").toBe(false);
  });
});
