import type { AiProvider, DraftRequest, DraftResult, ModelPrices } from './ai-provider.ts';
import { countTokens } from './token-count.ts';

/** The offline provider's model name: what it is, said plainly in every call it records. */
export const OFFLINE_MODEL = 'specwright-offline-1';

/**
 * The provider the service uses unless another is configured: no model and no network. It answers
 * each call with what `draftFrom` makes of the call's context (deterministic, so a run can be
 * repeated exactly), checked against the call's schema, and counts tokens as a model would be
 * charged for them: the prompt read and the JSON written, in the o200k_base encoding. Like a
 * model it stops at `maxOutputTokens`: a longer answer is cut there and has no output.
 */
export function createOfflineProvider(draftFrom: (context: unknown) => unknown, prices: ModelPrices): AiProvider {
  return {
    name: 'offline',
    model: OFFLINE_MODEL,
    prices,
    countTokens,
    async draft(request: DraftRequest): Promise<DraftResult> {
      const inputTokens = countTokens(`${request.system}\n\n${request.prompt}`);
      const output = request.schema.parse(draftFrom(request.context));
      const outputTokens = countTokens(JSON.stringify(output));
      if (outputTokens > request.maxOutputTokens) return { output: null, finishReason: 'length', usage: { inputTokens, outputTokens: request.maxOutputTokens } };
      return { output, finishReason: 'stop', usage: { inputTokens, outputTokens } };
    },
  };
}
