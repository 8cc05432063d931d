import type { Request, Response } from 'express';
import type { Kysely } from 'kysely';
// Brings pino-http's `req.log` augmentation into every program that type-checks this file.
import type {} from 'pino-http';
import type { AuthOutcome } from '../auth/authenticate.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';

/** What every procedure can reach, whether it was called over HTTP or through `createCaller`. */
export interface ContextInner {
  db: Kysely<Database>;
  config: Config;
  log: Logger;
  requestId: string;
  auth: AuthOutcome;
}

export type Context = ContextInner;

export function createContextInner(inner: ContextInner): Context {
  return inner;
}

export interface RequestScopedLocals {
  auth: AuthOutcome;
  requestId: string;
}

/** The adapter-bound half: reads what the express middleware already established. */
export function contextFactory(shared: { db: Kysely<Database>; config: Config }) {
  return ({ req, res }: { req: Request; res: Response }): Context => {
    const locals = res.locals as Partial<RequestScopedLocals>;
    return createContextInner({
      ...shared,
      log: req.log,
      requestId: locals.requestId ?? 'unknown',
      auth: locals.auth ?? { kind: 'anonymous' },
    });
  };
}
