import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * An API key reads `swk_<prefix>_<secret>`. The prefix is not secret: it finds the row. Only a
 * SHA-256 of the whole key is stored (the secret has 256 bits of entropy, so a slow KDF adds nothing).
 */
const KEY_PATTERN = /^swk_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export interface GeneratedApiKey {
  key: string;
  prefix: string;
  keyHash: string;
}

export function generateApiKey(): GeneratedApiKey {
  const prefix = `swk_${randomBytes(9).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '0').slice(0, 12)}`;
  const key = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, keyHash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The lookup prefix of a well-formed key, or undefined for anything else. */
export function apiKeyPrefix(key: string): string | undefined {
  const match = KEY_PATTERN.exec(key);
  return match ? `swk_${match[1]}` : undefined;
}

/** Constant-time comparison of a presented key's hash with the stored one. */
export function hashesMatch(presentedHash: string, storedHash: string): boolean {
  const actual = Buffer.from(presentedHash, 'hex');
  const expected = Buffer.from(storedHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
