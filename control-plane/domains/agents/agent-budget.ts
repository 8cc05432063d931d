import { costOf, type ModelPrices } from '../../ai/ai-provider.ts';

/** What an execution may spend and has spent. */
export interface Budget {
  tokenLimit: number;
  costLimitUsd: number;
  tokensUsed: number;
  costUsd: number;
}

export type CallAllowance = { maxOutputTokens: number } | { exceeded: string };

/** Dollars as whole nano-dollars, the unit the database keeps and `costOf` rounds to. */
const nanosOf = (dollars: number) => Math.round(dollars * 1e9);

/** What a call reading `inputTokens` and writing `outputTokens` is recorded as costing, in nano-dollars. */
const callNanos = (inputTokens: number, outputTokens: number, prices: ModelPrices) => nanosOf(costOf({ inputTokens, outputTokens }, prices));

/**
 * How many tokens a call may write so that, with its prompt, it cannot take the execution past its
 * token or cost budget (nor past `perCallMax`); or why no call can be made at all. The budget is
 * checked before the call, never after: the cap is the provider's hard limit. Dollars are counted
 * as the call will be recorded (costOf, in whole nano-dollars), so float error and rounding never
 * let the recorded cost pass the limit.
 */
export function allowanceFor(budget: Budget, inputTokens: number, prices: ModelPrices, perCallMax: number): CallAllowance {
  const tokensLeft = budget.tokenLimit - budget.tokensUsed - inputTokens;
  const nanosLeft = nanosOf(budget.costLimitUsd) - nanosOf(budget.costUsd);
  const fits = (outputTokens: number) => callNanos(inputTokens, outputTokens, prices) <= nanosLeft;
  let tokensByCost = fits(0) ? Number.POSITIVE_INFINITY : -1;
  if (tokensByCost > 0 && prices.outputPerMillionUsd > 0) {
    // An estimate from the exact price, then corrected by what costOf records (float error is a token at most
    // once the estimate is held to what the call could write anyway: past 2^53 a decrement changes nothing).
    const estimate = Math.floor((nanosLeft / 1_000 - inputTokens * prices.inputPerMillionUsd) / prices.outputPerMillionUsd);
    tokensByCost = Math.max(0, Math.min(estimate, perCallMax, Math.max(0, tokensLeft)));
    while (tokensByCost > 0 && !fits(tokensByCost)) tokensByCost--;
    if (fits(tokensByCost + 1)) tokensByCost++;
  }
  if (tokensLeft < 1) {
    return { exceeded: `The call needs ${inputTokens} prompt tokens and at least 1 to answer; the token budget has ${Math.max(0, budget.tokenLimit - budget.tokensUsed)} of ${budget.tokenLimit} left` };
  }
  if (tokensByCost < 1) {
    return { exceeded: `The call's prompt and at least 1 token of answer would cost more than the $${formatDollars(Math.max(0, budget.costLimitUsd - budget.costUsd))} left of the $${formatDollars(budget.costLimitUsd)} budget` };
  }
  return { maxOutputTokens: Math.min(tokensLeft, tokensByCost, perCallMax) };
}

/** Whether every call of a wave could write its most (`perCallMax`) at once and stay in the budget, each counted as it will be recorded. */
export function waveFitsAtOnce(budget: Budget, inputTokens: number[], prices: ModelPrices, perCallMax: number): boolean {
  const tokens = inputTokens.reduce((sum, input) => sum + input + perCallMax, 0);
  const nanos = inputTokens.reduce((sum, input) => sum + callNanos(input, perCallMax, prices), 0);
  return budget.tokensUsed + tokens <= budget.tokenLimit && nanosOf(budget.costUsd) + nanos <= nanosOf(budget.costLimitUsd);
}

/** Dollars as people read them: up to 9 decimals, trailing zeros dropped (0.000015, 5, 0.5). */
export function formatDollars(dollars: number): string {
  return dollars.toFixed(9).replace(/\.?0+$/, '');
}
