import { createHmac, hkdfSync } from 'node:crypto';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../../config.ts';
import { emailKey } from '../../db/email-key.ts';
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
 * and a success hands it back, so concurrent guesses cannot slip past a budget; a point is handed
 * back only to the window that took it (see `refund`). Keys are HMACs under a key derived from
 * SERVER_SECRET: the table never holds an email address, and whoever reads it cannot test a guessed
 * email against it (a plain digest of an email is one hash away from the guess).
 */
export type LoginAttemptOutcome = { allowed: true; succeeded(): Promise<void> } | { allowed: false; retryAfterSeconds: number };

export interface LoginThrottle {
  begin(email: string, clientAddress: string): Promise<LoginAttemptOutcome>;
}

/** The counters' key, derived as the session-token key is (HKDF, its own label), so every node agrees. */
export function deriveLoginThrottleKey(serverSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', serverSecret, 'specwright', 'login-throttle-key-v1', 32));
}

interface Budget {
  limiter: RateLimiterPostgres;
  key: string;
}

/** A point taken from a budget, and when the window that took it ends (by this process's clock). */
interface Reservation extends Budget {
  windowEndsAt: number;
}

/**
 * Takes a point from a budget; with `rejection` when the budget was spent already, in which case
 * the store counted the point all the same. The window's end is reckoned from the clock as read
 * before the point was taken, so it is never later than the end the store recorded.
 */
async function reserve(budget: Budget): Promise<{ reservation: Reservation; rejection?: RateLimiterRes }> {
  const before = Date.now();
  try {
    const taken = await budget.limiter.consume(budget.key);
    return { reservation: { ...budget, windowEndsAt: before + taken.msBeforeNext } };
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    return { reservation: { ...budget, windowEndsAt: before + rejection.msBeforeNext }, rejection };
  }
}

/**
 * Gives a point back to the window that took it. Once that window has ended its count is gone,
 * and a reward would open the next window at −1: one failed attempt more than the budget. The
 * store compares the window's end with this process's clock as read when the reward is made, in
 * the same synchronous step as this check, so only a window ending in those microseconds (or
 * another node whose clock runs ahead opening the next window early, by no more than the skew)
 * can still take the refund: negligible.
 */
async function refund({ limiter, key, windowEndsAt }: Reservation): Promise<void> {
  if (Date.now() < windowEndsAt) await limiter.reward(key);
}

export function createLoginThrottle(store: StatementBatches, limits: Config['loginLimits'], serverSecret: string): LoginThrottle {
  const counterKey = deriveLoginThrottleKey(serverSecret);
  const digest = (...parts: string[]) => createHmac('sha256', counterKey).update(parts.join('\n')).digest('hex');
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
      const normalised = emailKey(email);
      const budgets: Budget[] = [
        { limiter: perPair, key: digest(normalised, clientAddress) },
        { limiter: perAddress, key: digest(clientAddress) },
        { limiter: perEmail, key: digest(normalised) },
      ];
      const retryAfter = (states: Array<RateLimiterRes | null>) =>
        Math.max(1, Math.ceil(Math.max(...states.map((state) => state?.msBeforeNext ?? 0)) / 1000));

      const current = await Promise.all(budgets.map(({ limiter, key }) => limiter.get(key)));
      const spent = current.filter((state, index) => state !== null && state.consumedPoints >= budgets[index]!.limiter.points);
      if (spent.length > 0) return { allowed: false, retryAfterSeconds: retryAfter(spent) };

      const reserved: Reservation[] = [];
      for (const budget of budgets) {
        const { reservation, rejection } = await reserve(budget);
        reserved.push(reservation);
        if (rejection) {
          // Another attempt took the last point meanwhile: give back what this one reserved.
          await Promise.all(reserved.map(refund));
          return { allowed: false, retryAfterSeconds: retryAfter([rejection]) };
        }
      }
      const [pairPoint, addressPoint, emailPoint] = reserved as [Reservation, Reservation, Reservation];
      return {
        allowed: true,
        async succeeded() {
          await Promise.all([perPair.delete(pairPoint.key), refund(addressPoint), refund(emailPoint)]);
        },
      };
    },
  };
}
