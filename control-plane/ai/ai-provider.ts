import type { z } from 'zod';

/** What a model charges, in US dollars per million tokens read (input) and written (output). */
export interface ModelPrices {
  inputPerMillionUsd: number;
  outputPerMillionUsd: number;
}

export interface DraftUsage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * One call: an agent asked to draft, as JSON that `schema` accepts. `system` and `prompt` are what
 * a model reads; `context` is the same data, structured, for a provider that drafts without a model
 * (the offline provider). `maxOutputTokens` is a hard cap: the budget left decides it.
 */
export interface DraftRequest<Context = unknown> {
  agent: string;
  system: string;
  prompt: string;
  schema: z.ZodType;
  maxOutputTokens: number;
  context: Context;
  signal?: AbortSignal;
}

/**
 * What the call gave: the output (null when the model stopped at `maxOutputTokens` before the JSON
 * ended), why it stopped, and the tokens the provider counted — spent either way.
 */
export interface DraftResult {
  output: unknown;
  finishReason: 'stop' | 'length';
  usage: DraftUsage;
  /** The model the provider says answered, when it says (a dated version of the one asked for). */
  model?: string;
}

/**
 * A source of drafts: the offline provider (deterministic, no model) or a real one through the `ai`
 * SDK. `countTokens` counts a prompt before it is sent, so a call the budget cannot afford is never
 * made; `prices` turn usage into cost.
 */
export interface AiProvider {
  /** offline, openai-compatible, anthropic, … */
  readonly name: string;
  readonly model: string;
  readonly prices: ModelPrices;
  countTokens(text: string): number;
  draft(request: DraftRequest): Promise<DraftResult>;
}

/**
 * A provider's failure the caller may retry (a timeout, a 429, a 5xx) or not (a refused key, a bad
 * request, an answer the schema refuses). `usage`: what the call spent anyway, when the model did
 * answer (an answer that does not fit the schema is paid for all the same).
 */
export class AiProviderError extends Error {
  override name = 'AiProviderError';
  readonly retryable: boolean;
  readonly usage: DraftUsage | undefined;
  constructor(message: string, retryable: boolean, options?: { cause?: unknown; usage?: DraftUsage }) {
    super(message, options);
    this.retryable = retryable;
    this.usage = options?.usage;
  }
}

/** What `usage` costs at `prices`, in US dollars, rounded to the nano-dollar the database keeps. */
export function costOf(usage: DraftUsage, prices: ModelPrices): number {
  const dollars = (usage.inputTokens * prices.inputPerMillionUsd + usage.outputTokens * prices.outputPerMillionUsd) / 1_000_000;
  return Math.round(dollars * 1e9) / 1e9;
}
