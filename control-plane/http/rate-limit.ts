import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { AuthOutcome } from '../auth/authenticate.ts';
import type { RateLimitClass } from '../config.ts';
import type { Config } from '../config.ts';
import type { StatementBatches } from '../db/statement-batches.ts';
import { clientAddressOf } from './client-address.ts';
import { decodeOrKeep } from './decode-or-keep.ts';
import { sendRateLimited } from './surface-errors.ts';
import { MAX_TRPC_BATCH_SIZE, trpcProceduresOf } from './trpc-path.ts';

/**
 * The agent calls that set agents to work (a run, a resume); reading a run's status or the agents'
 * memory is not one: counted in the agent class (10 a minute), polling a run would use up the
 * budget for starting the next.
 */
const AGENT_WORK = ['generate-spec', 'generatespec', 'resume', 'coordinate'];

/**
 * DESIGN §5.9: which requests count against which budget, except that only the agent calls that
 * start work count as agent (see AGENT_WORK). Works for REST paths and tRPC paths; a tRPC batch
 * with any agent work in it counts as agent.
 */
export function rateLimitClassFor(path: string): RateLimitClass {
  // Routing ignores letter case, so the class does too.
  const segments = path.toLowerCase().split(/[/.,]/).filter(Boolean);
  const has = (segment: string) => segments.includes(segment);
  const follows = (first: string, second: string) => segments.some((s, i) => s === first && segments[i + 1] === second);
  if (has('agents') && AGENT_WORK.some(has)) return 'agent';
  if (follows('specification', 'compile') || follows('exports', 'compile') || follows('exports', 'download') || (has('exports') && segments.at(-1) === 'download')) {
    return 'compilation';
  }
  if (has('discovery-chat') || has('discoverychat')) return 'discoveryChat';
  return 'general';
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url').slice(0, 32);

/**
 * The caller a request counts against, where its credential tells without a database look-up (so
 * counting runs alongside authentication): an API key, keyed by a digest of the whole key, never
 * by a guessable part of it, so nobody can spend another caller's budget; without a credential, the
 * client address. A bearer token gives `undefined`: it counts against the user it names once it
 * has authenticated (`rateLimitCallerAfter`), since a user can hold any number of tokens at once (each
 * sign-in mints one) and a token of its own would bring each a fresh budget.
 */
export function rateLimitCallerKey(req: Request): string | undefined {
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey) return `key:${digest(apiKey)}`;
  if (/^Bearer\s+\S/i.test(req.headers.authorization ?? '')) return undefined;
  return clientAddressKey(req);
}

/**
 * The caller a request counts against once authentication has answered: the API key that
 * authenticated, as `rateLimitCallerKey` said; the user a bearer token names, whichever of their
 * tokens it is; else the client address. A credential that does not authenticate names no caller
 * (public routes still run for it), nor does one that X-E2E-Test-Mode overrode, or every made-up
 * key would bring a fresh budget.
 */
export function rateLimitCallerAfter(req: Request, auth: AuthOutcome, keyBefore: string | undefined): string {
  if (auth.kind !== 'authenticated') return clientAddressKey(req);
  if (auth.principal.via === 'api_key') return keyBefore ?? clientAddressKey(req);
  if (auth.principal.via === 'jwt') return `user:${auth.principal.userId}`;
  return clientAddressKey(req);
}

/** The client address a request counts against when it carries no credential that authenticates. */
function clientAddressKey(req: Request): string {
  return `ip:${clientAddressOf(req.ip)}`;
}

/** Points a request costs: one per procedure, so a tRPC batch (`/trpc/a,b,c?batch=1`) pays for each call. */
function rateLimitCostOf(path: string): number {
  const calls = trpcProceduresOf(path)?.split(',').length ?? 1;
  // A batch over the limit is refused whole and runs nothing: one request's worth, not its calls'.
  return calls > MAX_TRPC_BATCH_SIZE ? 1 : calls;
}

/**
 * Per-caller, per-class limits stored in PostgreSQL (rate-limiter-flexible), so every API node
 * shares the same counters. Every response carries the X-RateLimit-* headers.
 */
export function createRequestCounter(store: StatementBatches, limits: Config['rateLimits']) {
  const limiter = (keyPrefix: string, points: number, duration: number) =>
    new RateLimiterPostgres({ storeClient: store, storeType: 'pool', tableName: 'rate_limits', tableCreated: true, clearExpiredByTimeout: false, keyPrefix, points, duration });
  const perClass: Record<RateLimitClass, RateLimiterPostgres> = {
    general: limiter('general', limits.general, 60),
    agent: limiter('agent', limits.agent, 60),
    compilation: limiter('compilation', limits.compilation, 60),
    discoveryChat: limiter('chat', limits.discoveryChat, 60),
  };
  const hourly = limits.perHour ? limiter('hourly', limits.perHour, 3600) : undefined;

  const setHeaders = (res: Response, limit: number, state: RateLimiterRes) => {
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + state.msBeforeNext) / 1000)));
  };

  /**
   * Counts `points` against the limiter. A refused request runs none of its calls, so a refused
   * batch gives its points back: the calls that still fit the budget can be sent (a smaller batch)
   * instead of the whole window's rest being spent on calls that never ran. A single call is refused
   * only when nothing is left, so it has nothing to give back.
   */
  const consume = async (limiter: RateLimiterPostgres, key: string, points: number) => {
    try {
      return { allowed: true, limiter, state: await limiter.consume(key, points) };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      return { allowed: false, limiter, state: points > 1 ? await limiter.reward(key, points) : rejection };
    }
  };

  /**
   * Gives `points` back to the counters `rows` and deletes a counter left with none, so a caller the
   * request turned out not to be (a made-up key) keeps no row of its own in `rate_limits`, however
   * many requests share it at once; a real key's counter keeps the points of its other requests.
   * Both statements go out in one batch, in this order.
   */
  const giveBack = async (rows: string[], points: number) => {
    if (rows.length === 0) return;
    await Promise.all([
      store.query({ name: 'rate-limit-withdraw', text: 'update rate_limits set points = points - $2 where key = any($1::text[])', values: [rows, points] }),
      store.query({ name: 'rate-limit-drop-spent', text: 'delete from rate_limits where key = any($1::text[]) and points <= 0', values: [rows] }),
    ]);
  };

  /**
   * Counts the request against `key`. `apply` writes the verdict (headers, or the 429); `withdraw`
   * takes the count back, for a request counted before authentication under a caller it then
   * turned out not to be.
   */
  return async function countRequest(req: Request, key: string): Promise<RateCount> {
    // The path as the routers see it: tRPC decodes it before splitting a batch (`a%2Cb` is two calls).
    const path = decodeOrKeep(req.path);
    const points = rateLimitCostOf(path);
    const classResult = await consume(perClass[rateLimitClassFor(path)], key, points);
    const hourlyResult = classResult.allowed && hourly ? await consume(hourly, key, points) : undefined;
    // Refused by the hourly budget: the class budget gets back what the request did not use.
    if (hourlyResult && !hourlyResult.allowed) await classResult.limiter.reward(key, points);
    // The counters still holding this request's points: a refused batch, and the class budget of a
    // request the hourly one refused, have had theirs back already.
    const holding = [hourlyResult && !hourlyResult.allowed ? undefined : classResult, hourlyResult].filter((result) => result && (result.allowed || points === 1));
    const refused = [classResult, hourlyResult].find((result) => result && !result.allowed);
    // The headers describe the budget that binds: the refusing one, else the one with the fewest
    // points left (on a tie, the one that resets later). Showing the class budget while the hourly
    // one has less left would say "97 remaining" just before a 429.
    const shown = refused ?? [classResult, ...(hourlyResult ? [hourlyResult] : [])].reduce(bindingBudget);
    return {
      apply(res, next) {
        setHeaders(res, shown.limiter.points, shown.state);
        if (!refused) return next();
        res.setHeader('Retry-After', String(Math.max(1, Math.ceil(refused.state.msBeforeNext / 1000))));
        sendRateLimited(req, res);
      },
      withdraw: () => giveBack(holding.map((result) => result!.limiter.getKey(key)), points),
    };
  };
}

type Counted = { limiter: RateLimiterPostgres; state: RateLimiterRes };

/** Of two budgets a request passed, the one nearer to refusing the next: fewer points left, or as few and a later reset. */
function bindingBudget<T extends Counted>(a: T, b: T): T {
  const left = (result: Counted) => Math.max(0, result.state.remainingPoints);
  if (left(b) !== left(a)) return left(b) < left(a) ? b : a;
  return b.state.msBeforeNext > a.state.msBeforeNext ? b : a;
}

export type RateCount = {
  apply(res: Response, next: NextFunction): void;
  withdraw(): Promise<void>;
};
