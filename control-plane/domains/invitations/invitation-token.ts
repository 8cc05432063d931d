import { createHash, randomBytes } from 'node:crypto';

/**
 * An invitation token is 32 random bytes, base64url (43 characters). Only its SHA-256 is stored
 * (`token_hash`): 256 bits of entropy need no slow KDF, and a database leak yields no usable token.
 */
export function generateInvitationToken(): { token: string; tokenHash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, tokenHash: hashInvitationToken(token) };
}

export function hashInvitationToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
