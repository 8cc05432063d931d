import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateText, NoObjectGeneratedError, NoOutputGeneratedError, Output, RetryError, type LanguageModel, type LanguageModelUsage } from 'ai';
import type { AiConfig } from '../config.ts';
import { AiProviderError, type AiProvider, type DraftRequest, type DraftResult, type DraftUsage } from './ai-provider.ts';
import { countTokens } from './token-count.ts';

/**
 * Attempts after the first that the SDK makes on a 429, a 5xx or a dropped connection, with its
 * exponential backoff (2 s, then 4 s) or the provider's retry-after header. `callTimeoutMs` bounds
 * the whole call, retries and their waits included.
 */
const SDK_RETRIES = 2;

/**
 * A real model behind the `ai` SDK: an OpenAI-compatible chat-completions endpoint or Anthropic's
 * messages API. The SDK does the wire format, the structured output and the retries; this file
 * decides what a failure means for the caller and keeps the API key out of every message.
 */
export function createAiSdkProvider(config: AiConfig): AiProvider {
  const { provider, model: modelName } = config;
  if (provider === 'offline') throw new Error('createAiSdkProvider: the offline provider drafts without the ai SDK');
  if (!modelName) throw new Error(`createAiSdkProvider: ${provider} needs a model name`);
  const model = languageModel(config, provider, modelName);
  const label = `${provider} model ${modelName}`;

  return {
    name: provider,
    model: modelName,
    prices: config.prices,
    countTokens,
    draft: (request) => draft(model, label, config.callTimeoutMs, request),
  };
}

function languageModel(config: AiConfig, provider: 'openai-compatible' | 'anthropic', modelName: string): LanguageModel {
  if (provider === 'anthropic') {
    // The SDK's default base URL (https://api.anthropic.com/v1) unless one is configured: it
    // appends /messages, so a configured one ends in /v1 too.
    return createAnthropic({ apiKey: config.apiKey, ...(config.baseUrl ? { baseURL: config.baseUrl } : {}) })(modelName);
  }
  if (!config.baseUrl) throw new Error('createAiSdkProvider: openai-compatible needs a base URL');
  // Without supportsStructuredOutputs the SDK sends `response_format: json_object` and the schema
  // goes nowhere; with it, the schema travels as `response_format: json_schema`.
  return createOpenAICompatible({ name: 'specwright', baseURL: config.baseUrl, apiKey: config.apiKey, supportsStructuredOutputs: true })(modelName);
}

async function draft(model: LanguageModel, label: string, callTimeoutMs: number, request: DraftRequest): Promise<DraftResult> {
  const timeout = AbortSignal.timeout(callTimeoutMs);
  const abortSignal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  let result;
  try {
    result = await generateText({
      model,
      system: request.system,
      prompt: request.prompt,
      output: Output.object({ schema: request.schema }),
      maxOutputTokens: request.maxOutputTokens,
      abortSignal,
      maxRetries: SDK_RETRIES,
      // Strict json_schema (OpenAI's default here) refuses optional properties and most keywords
      // a zod schema produces; the SDK validates the answer against the zod schema anyway.
      providerOptions: { openaiCompatible: { strictJsonSchema: false } },
    });
  } catch (error) {
    // A JSON cut off at the cap fails to parse; the tokens were spent all the same.
    if (NoObjectGeneratedError.isInstance(error) && error.finishReason === 'length') {
      return { output: null, finishReason: 'length', usage: usageOf(error.usage, request, request.maxOutputTokens), ...answeredBy(error.response?.modelId) };
    }
    const failure = providerError(error, label, { cancelled: request.signal?.aborted === true, timedOut: timeout.aborted, callTimeoutMs });
    // An answer the schema refuses was written, and is paid for: its usage goes with the error.
    if (NoObjectGeneratedError.isInstance(error)) throw new AiProviderError(failure.message, failure.retryable, { usage: usageOf(error.usage, request, countTokens(error.text ?? '')) });
    throw failure;
  }
  const usage = usageOf(result.usage, request, result.finishReason === 'length' ? request.maxOutputTokens : countTokens(result.text));
  if (result.finishReason === 'length') return { output: null, finishReason: 'length', usage, ...answeredBy(result.response.modelId) };
  try {
    return { output: result.output, finishReason: 'stop', usage, ...answeredBy(result.response.modelId) };
  } catch (error) {
    // An empty answer (a refusal, a content filter) leaves no output to parse.
    if (NoOutputGeneratedError.isInstance(error)) throw new AiProviderError(`${label} answered no output (finish reason ${result.finishReason})`, false, { usage });
    throw error;
  }
}

/** The model the provider says answered, as a call records it (a provider that says none leaves the configured name). */
function answeredBy(modelId: string | undefined): { model?: string } {
  return modelId ? { model: modelId } : {};
}

/**
 * The tokens the provider says the call spent. An OpenAI-compatible server may report no usage (a
 * proxy, an older local server): then they are counted here — the prompt and the answer, or the
 * whole cap for an answer cut off at it — rather than taken as 0, which would let calls spend
 * without the budget ever seeing it.
 */
function usageOf(usage: LanguageModelUsage | undefined, request: DraftRequest, outputTokensCounted: number): DraftUsage {
  return {
    inputTokens: usage?.inputTokens ?? countTokens(`${request.system}\n\n${request.prompt}`),
    outputTokens: usage?.outputTokens ?? outputTokensCounted,
  };
}

/**
 * The SDK's error, told in words of our own. Its message, response body and request are left
 * behind on purpose: a provider may echo the key or the prompt in them, and an error must not
 * carry either on to a log or a caller, so no `cause` either.
 */
function providerError(error: unknown, label: string, call: { cancelled: boolean; timedOut: boolean; callTimeoutMs: number }): AiProviderError {
  if (call.cancelled) return new AiProviderError(`${label}: the call was cancelled`, false);
  if (call.timedOut) return new AiProviderError(`${label} did not answer within ${call.callTimeoutMs} ms`, true);
  // After its retries the SDK throws a RetryError around the attempts' errors; the last one says what happened.
  const last = RetryError.isInstance(error) ? error.lastError : error;
  const retriesSpent = RetryError.isInstance(error) ? ` (after ${error.errors.length} attempts)` : '';
  if (APICallError.isInstance(last)) {
    const status = last.statusCode;
    if (status === undefined) return new AiProviderError(`${label} could not be reached${retriesSpent}`, last.isRetryable);
    return new AiProviderError(`${label} answered ${status}${retriesSpent}`, isRetryableStatus(status));
  }
  if (NoObjectGeneratedError.isInstance(last)) return new AiProviderError(`${label} answered output that does not match the schema`, false);
  return new AiProviderError(`${label} failed: ${errorKind(last)}`, false);
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Only the error's class: its message may hold what the provider sent back. */
function errorKind(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
