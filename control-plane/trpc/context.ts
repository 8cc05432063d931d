import type { Request, Response } from 'express';
import type { Kysely } from 'kysely';
// Brings pino-http's `req.log` augmentation into every program that type-checks this file.
import type {} from 'pino-http';
import type { AuthOutcome } from '../auth/authenticate.ts';
import type { SessionTokens } from '../auth/session-token.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { CredentialKeyMaker } from '../domains/kit-credentials/credential-key-ring.ts';
import type { LoginThrottle } from '../domains/users/login-throttle.ts';
import { clientAddressOf } from '../http/client-address.ts';
import type { DownloadLinks } from '../http/download-links.ts';
import type { Logger } from '../logger.ts';

/** What every procedure can reach, whether it was called over HTTP or through `createCaller`. */
export interface ContextInner {
  db: Kysely<Database>;
  config: Config;
  log: Logger;
  requestId: string;
  auth: AuthOutcome;
  /** The address the caller counts against (http/client-address.ts: the socket's, or what proxies TRUST_PROXY names forwarded; IPv6 by its /64). */
  clientAddress: string;
  /** Sets a header on the response, e.g. Retry-After on a refused sign-in. */
  setResponseHeader: (name: string, value: string) => void;
  sessionTokens: SessionTokens;
  loginThrottle: LoginThrottle;
  downloadLinks: DownloadLinks;
  credentialKeys: CredentialKeyMaker;
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
export function contextFactory(shared: Pick<ContextInner, 'db' | 'config' | 'sessionTokens' | 'loginThrottle' | 'downloadLinks' | 'credentialKeys'>) {
  return ({ req, res }: { req: Request; res: Response }): Context => {
    const locals = res.locals as Partial<RequestScopedLocals>;
    return createContextInner({
      ...shared,
      log: req.log,
      requestId: locals.requestId ?? 'unknown',
      auth: locals.auth ?? { kind: 'anonymous' },
      clientAddress: clientAddressOf(req.ip ?? req.socket.remoteAddress),
      setResponseHeader: (name, value) => void res.setHeader(name, value),
    });
  };
}
