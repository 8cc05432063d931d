import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AiProviderError } from './ai-provider.ts';
import { createOfflineProvider } from './offline-provider.ts';

const request = (schema: z.ZodType, maxOutputTokens = 1_000) => ({ agent: 'designer', system: 'You are the designer.', prompt: 'Project: X', schema, maxOutputTokens, context: {} });
const prices = { inputPerMillionUsd: 0, outputPerMillionUsd: 0 };

describe('the offline provider', () => {
  it('answers a draft the schema accepts, counting the prompt read and the JSON written', async () => {
    const provider = createOfflineProvider(() => ({ designSystem: null }), prices);
    const result = await provider.draft(request(z.object({ designSystem: z.null() })));
    expect(result).toEqual({ output: { designSystem: null }, finishReason: 'stop', usage: { inputTokens: provider.countTokens('You are the designer.\n\nProject: X'), outputTokens: provider.countTokens('{"designSystem":null}') } });
  });

  it('refuses a draft its schema does not accept as a provider failure not worth retrying (the same answer would come again)', async () => {
    const provider = createOfflineProvider(() => ({ designSystem: 'teal' }), prices);
    const refused = await provider.draft(request(z.object({ designSystem: z.null() }))).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AiProviderError);
    expect(refused).toMatchObject({ retryable: false, message: expect.stringContaining('does not fit') });
  });
});
