import { describe, expect, it } from 'vitest';
import { costOf, type ModelPrices } from '../../ai/ai-provider.ts';
import { allowanceFor, waveFitsAtOnce, type Budget } from './agent-budget.ts';

/**
 * The budget is checked against what calls are recorded as costing (costOf, rounded to the
 * nano-dollar the database keeps), so the recorded spending never passes the limit.
 */
const nanos = (dollars: number) => Math.round(dollars * 1e9);
const fresh = (costLimitUsd: number, tokenLimit = 1_000_000): Budget => ({ tokenLimit, costLimitUsd, tokensUsed: 0, costUsd: 0 });

describe('allowanceFor', () => {
  it('never lets a call write a token whose recorded cost passes the cost limit, however dear the model', () => {
    // $999,999.999999999 per million written (the highest AI_PRICE_* takes) is ~$1 a token; the budget is a nano-dollar short of $1.
    const prices: ModelPrices = { inputPerMillionUsd: 0, outputPerMillionUsd: 999_999.999999999 };
    const budget = fresh(0.999999999);
    const allowance = allowanceFor(budget, 100, prices, 16_384);
    if ('maxOutputTokens' in allowance) expect(nanos(costOf({ inputTokens: 100, outputTokens: allowance.maxOutputTokens }, prices))).toBeLessThanOrEqual(nanos(budget.costLimitUsd));
    else expect(allowance.exceeded).toContain('would cost more');
  });

  it('still allows the token the cost limit pays for exactly, despite float error', () => {
    // 0.3 / 0.1 is 2.9999999999999996 in floating point: three tokens at $0.1 each fit $0.3.
    const prices: ModelPrices = { inputPerMillionUsd: 0, outputPerMillionUsd: 100_000 };
    expect(allowanceFor(fresh(0.3), 10, prices, 16_384)).toEqual({ maxOutputTokens: 3 });
    expect(allowanceFor({ ...fresh(0.3), costUsd: 0.1 + 0.1 }, 10, prices, 16_384)).toEqual({ maxOutputTokens: 1 });
  });

  it('lets free output be written up to the token budget, and refuses what cannot pay for its prompt', () => {
    const prices: ModelPrices = { inputPerMillionUsd: 2, outputPerMillionUsd: 0 };
    expect(allowanceFor(fresh(1, 1_000), 400, prices, 16_384)).toEqual({ maxOutputTokens: 600 });
    expect(allowanceFor(fresh(0.0000007), 400, prices, 16_384)).toHaveProperty('exceeded');
    expect(allowanceFor(fresh(5, 401), 400, prices, 16_384)).toEqual({ maxOutputTokens: 1 });
    expect(allowanceFor(fresh(5, 400), 400, prices, 16_384)).toHaveProperty('exceeded');
  });
});

describe('waveFitsAtOnce', () => {
  it('counts each call as it will be recorded: rounded to the nano-dollar', () => {
    // Half a nano-dollar a token read: each one-token call is recorded as 1 nano-dollar, two of them as 2.
    const prices: ModelPrices = { inputPerMillionUsd: 0.0005, outputPerMillionUsd: 0 };
    const budget = fresh(0.000000001);
    const recorded = 2 * nanos(costOf({ inputTokens: 1, outputTokens: 1 }, prices));
    expect(recorded).toBe(2);
    expect(waveFitsAtOnce(budget, [1, 1], prices, 1)).toBe(false);
    expect(waveFitsAtOnce(fresh(0.000000002), [1, 1], prices, 1)).toBe(true);
  });
});

describe('allowanceFor at the extremes', () => {
  it('answers at once for a tiny price against a large budget, where the tokens the dollars pay for are beyond 2^53', () => {
    const prices: ModelPrices = { inputPerMillionUsd: 0.000000001, outputPerMillionUsd: 0.000000001 };
    expect(allowanceFor(fresh(100_000, 100_000_000), 1_000, prices, 1_000_000)).toEqual({ maxOutputTokens: 1_000_000 });
    expect(allowanceFor(fresh(100_000, 1_500), 1_000, prices, 1_000_000)).toEqual({ maxOutputTokens: 500 });
  });
});
