import type { Kysely } from 'kysely';
import type { SessionTokens } from '../../auth/session-token.ts';
import type { Database } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { AppError, unauthorized } from '../../errors/app-error.ts';
import type { LoginThrottle } from './login-throttle.ts';
import { checkPassword, hashPassword, verifyAgainstDecoy } from './password-hash.ts';
import type { LoginInput, LoginResult } from './users.schema.ts';
import { findLogin, replacePasswordHash } from './users.repository.ts';

export interface SignInDeps {
  db: Kysely<Database>;
  sessionTokens: SessionTokens;
  loginThrottle: LoginThrottle;
  clientAddress: string;
  setResponseHeader: (name: string, value: string) => void;
  log: Logger;
}

/** One message for every failure, so a caller cannot tell an unknown email from a wrong password. */
const SIGN_IN_FAILED = 'The email or password is not correct';

/**
 * Email + password → a 15-minute session token. Unknown emails and users without a password spend
 * the same argon2 work as a real check and fail with the same message; failures are throttled
 * (see login-throttle.ts) before any password is looked at. A successful sign-in whose stored hash
 * is outdated stores a fresh one.
 */
export async function signIn(deps: SignInDeps, input: LoginInput): Promise<LoginResult> {
  const attempt = await deps.loginThrottle.begin(input.email, deps.clientAddress);
  if (!attempt.allowed) {
    deps.setResponseHeader('Retry-After', String(attempt.retryAfterSeconds));
    throw new AppError('RATE_LIMITED', 'Too many failed sign-in attempts; retry after the time in Retry-After', { retryAfterSeconds: attempt.retryAfterSeconds });
  }
  const login = await findLogin(deps.db, input.email);
  const check = login?.password_hash ? await checkPassword(input.password, login.password_hash) : { matches: await verifyAgainstDecoy(input.password) };
  if (!login?.password_hash || !check.matches) throw unauthorized(SIGN_IN_FAILED);
  await attempt.succeeded();
  // The password is known only now: a hash stored before normalisation or at an old cost is
  // replaced by one made today, so the legacy fallback and old costs retire as users sign in.
  // Best effort: the password is right, so a failure here must not fail the sign-in.
  if (check.rehash) {
    await replacePasswordHash(deps.db, login, login.password_hash, await hashPassword(input.password)).catch((error: unknown) =>
      deps.log.warn({ err: error, userId: login.user_id }, 'an outdated password hash could not be replaced; the next sign-in tries again'),
    );
  }
  const issued = await deps.sessionTokens.issue(login.user_id);
  return { accessToken: issued.accessToken, tokenType: 'Bearer', expiresAt: issued.expiresAt.toISOString(), expiresIn: issued.expiresIn };
}
