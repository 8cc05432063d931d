import { AiProviderError, type AiProvider, type DraftRequest, type DraftResult, type ModelPrices } from '../../control-plane/ai/ai-provider.ts';
import { createOfflineProvider } from '../../control-plane/ai/offline-provider.ts';
import type { AgentCallContext } from '../../control-plane/domains/agents/agent-call-request.ts';
import { draftOffline } from '../../control-plane/domains/agents/offline-drafts.ts';

/** What a scripted call does instead of the offline provider's answer: fail for a while, write past its cap, or answer this. */
export type Misbehaviour = 'retryable' | 'too long' | DraftResult | undefined;

/**
 * The offline provider, but `misbehave` decides first what each call does (undefined: answer as the
 * offline provider would); every request is kept, for tests that run an execution themselves.
 */
export function scriptedProvider(prices: ModelPrices, misbehave: (request: DraftRequest) => Misbehaviour | Promise<Misbehaviour>) {
  const offline = createOfflineProvider((context) => draftOffline(context as AgentCallContext), prices);
  const requests: DraftRequest[] = [];
  const provider: AiProvider = {
    ...offline,
    async draft(request) {
      requests.push(request);
      const what = await misbehave(request);
      if (what === 'retryable') throw new AiProviderError('The provider answered 503', true);
      if (what === 'too long') return { output: null, finishReason: 'length', usage: { inputTokens: offline.countTokens(`${request.system}\n\n${request.prompt}`), outputTokens: request.maxOutputTokens } };
      return what ?? offline.draft(request);
    },
  };
  return { provider, requests };
}
