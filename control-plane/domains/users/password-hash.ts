import { argon2, randomBytes, timingSafeEqual, type Argon2Parameters } from 'node:crypto';

/**
 * Passwords are stored as PHC strings, `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>` (base64
 * without padding), so each hash carries its own salt and cost and old hashes keep verifying when
 * the defaults change. argon2id is Node 24's built-in (`crypto.argon2`, OpenSSL), memory-hard.
 * The defaults are OWASP's argon2id minimum (19 MiB, 2 passes, 1 lane).
 */
export const passwordHashDefaults = { memory: 19_456, passes: 2, parallelism: 1, tagLength: 32, saltLength: 16 } as const;

/** Caps on what a stored string may ask for, so a corrupt row cannot make one check take minutes. */
const limits = { memory: 262_144, passes: 10, parallelism: 8 } as const;

const PHC_PATTERN = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/**
 * The same visible password is the same password: `é` arrives as one code point from one keyboard
 * and as `e` + a combining accent from another, so passwords are hashed in Unicode NFKC, as NIST SP
 * 800-63B asks.
 */
export const normalisedPassword = (password: string) => password.normalize('NFKC');

function derive(password: string, salt: Buffer, cost: { memory: number; passes: number; parallelism: number; tagLength: number }): Promise<Buffer> {
  const parameters: Argon2Parameters = { message: password, nonce: salt, ...cost };
  return new Promise((resolve, reject) => argon2('argon2id', parameters, (error, key) => (error ? reject(error) : resolve(key))));
}

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

export async function hashPassword(password: string): Promise<string> {
  const { memory, passes, parallelism, tagLength, saltLength } = passwordHashDefaults;
  const salt = randomBytes(saltLength);
  const hash = await derive(normalisedPassword(password), salt, { memory, passes, parallelism, tagLength });
  return `$argon2id$v=19$m=${memory},t=${passes},p=${parallelism}$${b64(salt)}$${b64(hash)}`;
}

/**
 * What checking a password against a stored hash found. `rehash` says the stored hash should be
 * replaced by `hashPassword(password)` now that the password is known: it was stored before
 * passwords were normalised, or with a cost other than today's defaults.
 */
export type PasswordCheck = { matches: false } | { matches: true; rehash: boolean };

const NO_MATCH: PasswordCheck = { matches: false };

/** Checks `password` against `encoded`; anything malformed is no match. */
export async function checkPassword(password: string, encoded: string): Promise<PasswordCheck> {
  const match = PHC_PATTERN.exec(encoded);
  if (!match) return NO_MATCH;
  const [memory, passes, parallelism] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (memory > limits.memory || passes > limits.passes || parallelism > limits.parallelism || parallelism < 1 || passes < 1 || memory < 8 * parallelism) {
    return NO_MATCH;
  }
  const salt = Buffer.from(match[4]!, 'base64');
  const expected = Buffer.from(match[5]!, 'base64');
  if (salt.length < 8 || expected.length < 16) return NO_MATCH;
  const cost = { memory, passes, parallelism, tagLength: expected.length };
  const d = passwordHashDefaults;
  const outdatedCost = memory !== d.memory || passes !== d.passes || parallelism !== d.parallelism || expected.length !== d.tagLength || salt.length !== d.saltLength;
  const normalised = normalisedPassword(password);
  if (timingSafeEqual(await derive(normalised, salt, cost), expected)) return { matches: true, rehash: outdatedCost };
  // Hashes stored before passwords were normalised hold the password exactly as it was typed.
  // (A password NFKC leaves alone costs one derivation either way, known account or not.)
  if (normalised !== password && timingSafeEqual(await derive(password, salt, cost), expected)) return { matches: true, rehash: true };
  return NO_MATCH;
}

/**
 * A stored hash at today's cost that no password matches: a random salt and a random tag, made
 * without running argon2 — made by hashing, the first check against it in a process cost two
 * derivations, and that one answer told an unknown email from a known one.
 */
const decoy = (() => {
  const { memory, passes, parallelism, tagLength, saltLength } = passwordHashDefaults;
  return `$argon2id$v=19$m=${memory},t=${passes},p=${parallelism}$${b64(randomBytes(saltLength))}$${b64(randomBytes(tagLength))}`;
})();

/**
 * Spends the same work as a real check and answers false: used when the email is unknown or the
 * user has no password, so response time does not tell which accounts exist.
 */
export async function verifyAgainstDecoy(password: string): Promise<false> {
  await checkPassword(password, decoy);
  return false;
}
