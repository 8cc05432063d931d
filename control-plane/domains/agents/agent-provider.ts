import { createAiSdkProvider } from '../../ai/ai-sdk-provider.ts';
import type { AiProvider } from '../../ai/ai-provider.ts';
import { createOfflineProvider } from '../../ai/offline-provider.ts';
import type { AiConfig } from '../../config.ts';
import type { AgentCallContext } from './agent-call-request.ts';
import { draftOffline } from './offline-drafts.ts';

/** The provider AI_PROVIDER names: offline (the default: drafts from the project's answers, no model) or a real one. */
export function agentProviderFor(config: AiConfig): AiProvider {
  if (config.provider === 'offline') return createOfflineProvider((context) => draftOffline(context as AgentCallContext), config.prices);
  return createAiSdkProvider(config);
}
