import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { AppError, unauthorized } from '../errors/app-error.ts';

export interface JwtSettings {
  secret: string | undefined;
  jwksUrl: string | undefined;
  issuer: string | undefined;
  audience: string | undefined;
  algorithms: string[];
  /** The oldest (by `iat`) a token may be, whatever its `exp` says. */
  maxTokenAgeSeconds: number;
}

export type JwtVerifier = (token: string) => Promise<{ subject: string }>;

/** How far the identity provider's clock may be from ours, for exp, nbf and iat. */
export const JWT_CLOCK_TOLERANCE_SECONDS = 30;

/**
 * Verifies bearer tokens against a JWKS URL or a shared secret, with an explicit algorithm
 * allow-list (so `alg: none` and algorithm confusion are refused) and exp/iss/aud checks, and a
 * maximum age by `iat`: an `exp` years ahead would make a leaked token good for years.
 */
export function createJwtVerifier(settings: JwtSettings): JwtVerifier {
  const key: Uint8Array | JWTVerifyGetKey | undefined = settings.jwksUrl
    ? createRemoteJWKSet(new URL(settings.jwksUrl), { cooldownDuration: 30_000, timeoutDuration: 5_000 })
    : settings.secret
      ? new TextEncoder().encode(settings.secret)
      : undefined;

  return async (token) => {
    if (!key) throw unauthorized('Bearer tokens are not accepted: no JWT issuer is configured');
    try {
      const options = {
        algorithms: settings.algorithms,
        // jose checks exp only when present; a token without one would be valid forever.
        requiredClaims: ['exp'],
        // Makes iat required too: without it a token's age is unknown. An iat further ahead than
        // the clock tolerance is refused as well, or a token could date itself into the future.
        maxTokenAge: settings.maxTokenAgeSeconds,
        // The IdP's clock and ours differ a little (RFC 7519 §4.1.4 allows leeway): a token
        // issued a moment ago with nbf = now must not be refused as not yet valid.
        clockTolerance: JWT_CLOCK_TOLERANCE_SECONDS,
        ...(settings.issuer ? { issuer: settings.issuer } : {}),
        ...(settings.audience ? { audience: settings.audience } : {}),
      };
      const { payload } = typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
      if (!payload.sub) throw unauthorized('The bearer token has no subject');
      return { subject: payload.sub };
    } catch (error) {
      if (keysCouldNotBeFetched(error)) throw new AppError('SERVICE_UNAVAILABLE', "The identity provider's signing keys cannot be fetched; try again shortly");
      throw unauthorized(describeJwtFailure(error, settings.maxTokenAgeSeconds));
    }
  };
}

/**
 * The key set could not be had: the fetch failed or timed out, or the answer was no 200 or no key
 * set. Nothing is wrong with the token as far as anyone knows, and signing in again would not help,
 * so this is SERVICE_UNAVAILABLE (try again), not UNAUTHORIZED (which tells clients to drop it).
 * Every failure about the token itself is a JOSEError with a code of its own.
 */
function keysCouldNotBeFetched(error: unknown): boolean {
  // fetch's own failure (refused, reset, no such host): a TypeError it names so. Any other error is
  // a fault of this service, and stays one.
  if (error instanceof TypeError) return error.message === 'fetch failed';
  if (!(error instanceof errors.JOSEError)) return false;
  return error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || error.code === errors.JOSEError.code;
}

function describeJwtFailure(error: unknown, maxTokenAgeSeconds: number): string {
  const { code, claim = 'required', reason } = error as { code?: string; claim?: string; reason?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      // jose reports a token older than maxTokenAge as expired, naming iat.
      if (claim === 'iat') return `The bearer token is older than this service accepts: issued (iat) more than ${describeSeconds(maxTokenAgeSeconds)} ago; get a new one from the identity provider`;
      return 'The bearer token has expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      if (claim === 'iat' && reason === 'missing') return 'The bearer token has no iat claim, so its age cannot be checked';
      if (reason === 'missing') return `The bearer token has no ${claim} claim`;
      if (reason === 'invalid') return `The bearer token's ${claim} claim is not a number of seconds`;
      if (claim === 'nbf') return 'The bearer token is not valid yet (nbf)';
      if (claim === 'iat') return 'The bearer token is issued in the future (iat)';
      return `The bearer token was not issued for this service (${claim} check failed)`;
    }
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'The bearer token uses an algorithm that is not allowed';
    default:
      return (error as { name?: string }).name === 'AppError'
        ? (error as Error).message
        : 'The bearer token is invalid';
  }
}

/** 86400 → "1 day", 7200 → "2 hours", 90 → "90 seconds": the largest whole unit, as a person would say it. */
function describeSeconds(seconds: number): string {
  const units: Array<[number, string]> = [[86_400, 'day'], [3_600, 'hour'], [60, 'minute']];
  const [size, unit] = units.find(([size]) => seconds % size === 0) ?? [1, 'second'];
  const count = seconds / size;
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}
