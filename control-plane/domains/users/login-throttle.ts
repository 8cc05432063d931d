import { createHash } from 'node:crypto';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../../config.ts';
import type { StatementBatches } from '../../db/statement-batches.ts';

/**
 * Failed sign-ins are counted in PostgreSQL (rate-limiter-flexible, table `rate_limits`), so every
 * API node shares the counts, in three budgets per window:
 *
 * - per email *and* client address (default 5): stops guessing one account from one place. It is
 *   cleared by a successful sign-in from that address.
 * - per client address (default 20): stops one place from spraying guesses across many accounts.
 * - per email, from anywhere (default 25): bounds a distributed guess at one account.
 *
 * The first budget is deliberately the tight one and is scoped to the address, so someone else's
 * failures elsewhere cannot lock a user out; only the larger per-email budget, once spent, blocks
 * everyone (that is the price of bounding a botnet). A blocked attempt is refused before any
 * password check and does not count again. Each attempt reserves a point in every budget up front
 * and a success hands it back, so concurrent guesses cannot slip past a budget. Keys are SHA-256
 * digests: the table never holds an email address.
 */
export type LoginAttemptOutcome = { allowed: true; succeeded(): Promise<void> } | { allowed: false; retryAfterSeconds: number };

export interface LoginThrottle {
  begin(email: string, clientAddress: string): Promise<LoginAttemptOutcome>;
}

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex');

export function createLoginThrottle(store: StatementBatches, limits: Config['loginLimits']): LoginThrottle {
  const limiter = (keyPrefix: string, points: number) =>
    new RateLimiterPostgres({
      storeClient: store,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix,
      points,
      duration: limits.windowSeconds,
    });
  const perPair = limiter('login_pair', limits.perEmailAndAddress);
  const perAddress = limiter('login_address', limits.perAddress);
  const perEmail = limiter('login_email', limits.perEmail);

  return {
    async begin(email, clientAddress) {
      const normalised = email.trim().toLowerCase();
      const budgets = [
        { limiter: perPair, key: digest(normalised, clientAddress) },
        { limiter: perAddress, key: digest(clientAddress) },
        { limiter: perEmail, key: digest(normalised) },
      ];
      const retryAfter = (states: Array<RateLimiterRes | null>) =>
        Math.max(1, Math.ceil(Math.max(...states.map((state) => state?.msBeforeNext ?? 0)) / 1000));

      const current = await Promise.all(budgets.map(({ limiter, key }) => limiter.get(key)));
      const spent = current.filter((state, index) => state !== null && state.consumedPoints >= budgets[index]!.limiter.points);
      if (spent.length > 0) return { allowed: false, retryAfterSeconds: retryAfter(spent) };

      const reserved: typeof budgets = [];
      for (const budget of budgets) {
        try {
          await budget.limiter.consume(budget.key);
          reserved.push(budget);
        } catch (rejection) {
          if (!(rejection instanceof RateLimiterRes)) throw rejection;
          // Another attempt took the last point meanwhile: give back what this one reserved.
          await Promise.all([budget, ...reserved].map(({ limiter, key }) => limiter.reward(key)));
          return { allowed: false, retryAfterSeconds: retryAfter([rejection]) };
        }
      }
      return {
        allowed: true,
        async succeeded() {
          await Promise.all([perPair.delete(budgets[0]!.key), perAddress.reward(budgets[1]!.key), perEmail.reward(budgets[2]!.key)]);
        },
      };
    },
  };
}
