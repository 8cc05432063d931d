import type { ModelPrices } from '../../ai/ai-provider.ts';

/** What an execution may spend and has spent. */
export interface Budget {
  tokenLimit: number;
  costLimitUsd: number;
  tokensUsed: number;
  costUsd: number;
}

export type CallAllowance = { maxOutputTokens: number } | { exceeded: string };

/**
 * How many tokens a call may write so that, with its prompt, it cannot take the execution past its
 * token or cost budget (nor past `perCallMax`); or why no call can be made at all. The budget is
 * checked before the call, never after: the cap is the provider's hard limit.
 */
export function allowanceFor(budget: Budget, inputTokens: number, prices: ModelPrices, perCallMax: number): CallAllowance {
  const tokensLeft = budget.tokenLimit - budget.tokensUsed - inputTokens;
  const dollarsLeft = budget.costLimitUsd - budget.costUsd - (inputTokens * prices.inputPerMillionUsd) / 1_000_000;
  const tokensByCost = dollarsLeft < 0 ? -1 : prices.outputPerMillionUsd > 0 ? Math.floor((dollarsLeft * 1_000_000) / prices.outputPerMillionUsd + 1e-9) : Number.POSITIVE_INFINITY;
  if (tokensLeft < 1) {
    return { exceeded: `The call needs ${inputTokens} prompt tokens and at least 1 to answer; the token budget has ${Math.max(0, budget.tokenLimit - budget.tokensUsed)} of ${budget.tokenLimit} left` };
  }
  if (tokensByCost < 1) {
    return { exceeded: `The call's prompt and at least 1 token of answer would cost more than the $${formatDollars(Math.max(0, budget.costLimitUsd - budget.costUsd))} left of the $${formatDollars(budget.costLimitUsd)} budget` };
  }
  return { maxOutputTokens: Math.min(tokensLeft, tokensByCost, perCallMax) };
}

/** Whether every call of a wave could write its most (`perCallMax`) at once and stay in the budget. */
export function waveFitsAtOnce(budget: Budget, inputTokens: number[], prices: ModelPrices, perCallMax: number): boolean {
  const tokens = inputTokens.reduce((sum, input) => sum + input + perCallMax, 0);
  const dollars = inputTokens.reduce((sum, input) => sum + (input * prices.inputPerMillionUsd + perCallMax * prices.outputPerMillionUsd) / 1_000_000, 0);
  return budget.tokensUsed + tokens <= budget.tokenLimit && budget.costUsd + dollars <= budget.costLimitUsd;
}

/** Dollars as people read them: up to 9 decimals, trailing zeros dropped (0.000015, 5, 0.5). */
export function formatDollars(dollars: number): string {
  return dollars.toFixed(9).replace(/\.?0+$/, '');
}
