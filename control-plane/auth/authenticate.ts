import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Database } from '../db/database.ts';
import { AppError, forbidden, invalid, notFound, unauthorized } from '../errors/app-error.ts';
import { apiKeyPrefix, hashApiKey, hashesMatch } from './api-key-format.ts';
import { authenticateApiKey, authenticateUser, tenantExists } from './auth.repository.ts';
import type { JwtVerifier } from './jwt-verifier.ts';
import type { Principal } from './principal.ts';
import type { SessionTokens } from './session-token.ts';

export interface AuthHeaders {
  authorization?: string | undefined;
  apiKey?: string | undefined;
  tenantId?: string | undefined;
  e2eTestMode?: string | undefined;
}

export type AuthOutcome =
  | { kind: 'authenticated'; principal: Principal }
  | { kind: 'anonymous' }
  | { kind: 'rejected'; error: AppError };

/** The principal of an authenticated request; otherwise the error the caller gets (UNAUTHORIZED). */
export function requirePrincipal(auth: AuthOutcome): Principal {
  if (auth.kind === 'authenticated') return auth.principal;
  if (auth.kind === 'rejected') throw auth.error;
  throw unauthorized('Authentication is required: send X-API-Key or Authorization: Bearer');
}

export interface Authenticator {
  authenticate(headers: AuthHeaders): Promise<AuthOutcome>;
}

export interface AuthenticatorDeps {
  db: Kysely<Database>;
  /** The external IdP's tokens (JWT_SECRET / JWT_JWKS_URL). */
  verifyJwt: JwtVerifier;
  /** The service's own session tokens, issued at sign-in. */
  sessionTokens: SessionTokens;
  /** Set only when the server was started with E2E_TEST_MODE=true. */
  e2eTestUser: Principal | undefined;
}

const uuid = z.uuid();

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  async function fromApiKey(key: string): Promise<Principal> {
    const prefix = apiKeyPrefix(key);
    const presentedHash = hashApiKey(key);
    const found = prefix ? await authenticateApiKey(deps.db, prefix, presentedHash) : undefined;
    // One message for unknown, malformed and wrong keys: no oracle for which part was wrong.
    if (!found || !hashesMatch(presentedHash, found.key_hash)) throw unauthorized('The API key is not valid');
    if (found.revoked) throw unauthorized('The API key has been revoked');
    return {
      userId: found.user_id,
      tenantId: found.tenant_id,
      homeTenantId: found.tenant_id,
      isPlatformAdmin: found.is_platform_admin,
      via: 'api_key',
      apiKeyId: found.api_key_id,
    };
  }

  async function fromBearer(token: string): Promise<Principal> {
    // A token that names our session issuer is checked with our key only, never with the IdP's.
    const { subject } = deps.sessionTokens.claimsToBeSessionToken(token) ? await deps.sessionTokens.verify(token) : await deps.verifyJwt(token);
    // Also notes, the first time, that a bearer token authenticated the user: the reissue of an
    // owner's key asks whether they ever got in. Session tokens are noted too, though their user
    // has a password already, which says as much.
    const user = uuid.safeParse(subject).success ? await authenticateUser(deps.db, subject) : undefined;
    if (!user) throw unauthorized('The bearer token names no known user');
    return {
      userId: user.user_id,
      tenantId: user.tenant_id,
      homeTenantId: user.tenant_id,
      isPlatformAdmin: user.is_platform_admin,
      via: 'jwt',
    };
  }

  async function identify(headers: AuthHeaders): Promise<Principal | undefined> {
    if (deps.e2eTestUser && headers.e2eTestMode === 'true') return deps.e2eTestUser;
    // Two credentials may name two users; acting as either one would be a guess (RFC 6750 §2: a
    // client uses one method). An Authorization of another scheme (a proxy's Basic) is not ours.
    if (headers.apiKey !== undefined && /^Bearer(\s|$)/i.test(headers.authorization ?? '')) {
      throw unauthorized('Send one credential: X-API-Key or Authorization: Bearer, not both');
    }
    if (headers.apiKey !== undefined) return fromApiKey(headers.apiKey);
    if (headers.authorization !== undefined) {
      const match = /^Bearer\s+(\S+)$/i.exec(headers.authorization);
      if (!match?.[1]) throw unauthorized('The Authorization header must read "Bearer <token>"');
      // A JWT begins with its encoded header (`eyJ`); this is one of our API keys, in the wrong header.
      if (match[1].startsWith('swk_')) throw unauthorized('An API key is sent in the X-API-Key header, not as a bearer token');
      return fromBearer(match[1]);
    }
    return undefined;
  }

  async function applyTenantHeader(principal: Principal, header: string | undefined): Promise<Principal> {
    // A uuid names the same tenant in any letter case; ids are stored in lower case.
    const requested = header?.toLowerCase();
    if (requested === undefined || requested === principal.homeTenantId) return principal;
    if (!principal.isPlatformAdmin) {
      throw forbidden('X-Tenant-ID may name another tenant only for platform admins');
    }
    if (!uuid.safeParse(requested).success) throw invalid('X-Tenant-ID must be a tenant id (a uuid)');
    if (!(await tenantExists(deps.db, requested))) throw notFound('The tenant named by X-Tenant-ID');
    return { ...principal, tenantId: requested };
  }

  return {
    async authenticate(headers) {
      try {
        const principal = await identify(headers);
        if (!principal) return { kind: 'anonymous' };
        return { kind: 'authenticated', principal: await applyTenantHeader(principal, headers.tenantId) };
      } catch (error) {
        if (error instanceof AppError) return { kind: 'rejected', error };
        throw error;
      }
    },
  };
}
