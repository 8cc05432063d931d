import { hkdfSync, randomUUID } from 'node:crypto';
import { decodeJwt, jwtVerify, SignJWT } from 'jose';
import { unauthorized } from '../errors/app-error.ts';

/**
 * Session tokens: short-lived JWTs the service signs itself at sign-in (`POST /auth/login`).
 * HS256 with a key derived from SERVER_SECRET (HKDF, its own label), so every API node that shares
 * the secret verifies them and no other use of the secret can produce one. They carry their own
 * issuer and audience, which is how the authenticator tells them from an external IdP's tokens.
 */
export const SESSION_TOKEN_ISSUER = 'urn:specwright:session';
export const SESSION_TOKEN_AUDIENCE = 'urn:specwright:api';
export const SESSION_TOKEN_TTL_SECONDS = 15 * 60;

export interface IssuedSessionToken {
  accessToken: string;
  expiresAt: Date;
  expiresIn: number;
}

export interface SessionTokens {
  issue(userId: string): Promise<IssuedSessionToken>;
  /** Whether the token claims to be ours (unverified); ours are never handed to another verifier. */
  claimsToBeSessionToken(token: string): boolean;
  verify(token: string): Promise<{ subject: string }>;
}

export function deriveSessionSigningKey(serverSecret: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', serverSecret, 'specwright', 'session-token-signing-key-v1', 32));
}

export function createSessionTokens(serverSecret: string, now: () => number = Date.now): SessionTokens {
  const key = deriveSessionSigningKey(serverSecret);
  return {
    async issue(userId) {
      const issuedAt = Math.floor(now() / 1000);
      const expiresAtSeconds = issuedAt + SESSION_TOKEN_TTL_SECONDS;
      const accessToken = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
        .setIssuer(SESSION_TOKEN_ISSUER)
        .setAudience(SESSION_TOKEN_AUDIENCE)
        .setSubject(userId)
        .setJti(randomUUID())
        .setIssuedAt(issuedAt)
        .setExpirationTime(expiresAtSeconds)
        .sign(key);
      return { accessToken, expiresAt: new Date(expiresAtSeconds * 1000), expiresIn: SESSION_TOKEN_TTL_SECONDS };
    },

    claimsToBeSessionToken(token) {
      try {
        return decodeJwt(token).iss === SESSION_TOKEN_ISSUER;
      } catch {
        return false;
      }
    },

    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: ['HS256'],
          issuer: SESSION_TOKEN_ISSUER,
          audience: SESSION_TOKEN_AUDIENCE,
          typ: 'at+jwt',
          requiredClaims: ['sub', 'exp', 'iat'],
        });
        return { subject: payload.sub! };
      } catch (error) {
        throw unauthorized((error as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'The session token has expired; sign in again' : 'The session token is invalid');
      }
    },
  };
}
