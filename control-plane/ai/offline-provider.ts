import { AiProviderError, type AiProvider, type DraftRequest, type DraftResult, type ModelPrices } from './ai-provider.ts';
import { countTokens } from './token-count.ts';

/** The offline provider's model name: what it is, said plainly in every call it records. */
export const OFFLINE_MODEL = 'specwright-offline-1';

/**
 * The provider the service uses unless another is configured: no model and no network. It answers
 * each call with what `draftFrom` makes of the call's context (deterministic, so a run can be
 * repeated exactly), checked against the call's schema, and counts tokens as a model would be
 * charged for them: the prompt read and the JSON written, in the o200k_base encoding. Like a
 * model it stops at `maxOutputTokens`: a longer answer is cut there and has no output; a draft the
 * schema refuses is an AiProviderError not worth retrying.
 */
export function createOfflineProvider(draftFrom: (context: unknown) => unknown, prices: ModelPrices): AiProvider {
  return {
    name: 'offline',
    model: OFFLINE_MODEL,
    prices,
    countTokens,
    async draft(request: DraftRequest): Promise<DraftResult> {
      const inputTokens = countTokens(`${request.system}\n\n${request.prompt}`);
      // A refusal is final, as a model's is: the same context drafts the same answer, so a retry would meet it again.
      const parsed = request.schema.safeParse(draftFrom(request.context));
      if (!parsed.success) {
        const issues = parsed.error.issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`).join('; ');
        throw new AiProviderError(`The offline provider's draft for ${request.agent} does not fit the call's schema: ${issues}`, false, { usage: { inputTokens, outputTokens: 0 } });
      }
      const output = parsed.data;
      const outputTokens = countTokens(JSON.stringify(output));
      if (outputTokens > request.maxOutputTokens) return { output: null, finishReason: 'length', usage: { inputTokens, outputTokens: request.maxOutputTokens } };
      return { output, finishReason: 'stop', usage: { inputTokens, outputTokens } };
    },
  };
}
