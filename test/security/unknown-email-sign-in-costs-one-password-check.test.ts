import { describe, expect, it, vi } from 'vitest';

// Every argon2 derivation the password module runs, counted.
const derivations = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  const argon2: typeof crypto.argon2 = (...args) => {
    derivations.count++;
    return crypto.argon2(...args);
  };
  return { ...crypto, argon2 };
});

const { checkPassword, hashPassword, verifyAgainstDecoy } = await import('../../control-plane/domains/users/password-hash.ts');

/**
 * A sign-in for an unknown email is checked against a decoy hash, so it costs what a wrong password
 * for a known account costs. The decoy was made by hashing on first use: the first unknown-email
 * sign-in of each process cost two argon2 runs (about 150 ms against 30), and told so.
 */
describe('a sign-in for an unknown email', () => {
  it('costs one argon2 derivation from the first, as a wrong password for a known account does', async () => {
    derivations.count = 0;
    expect(await verifyAgainstDecoy('correct horse battery staple')).toBe(false);
    expect(derivations.count).toBe(1);
    expect(await verifyAgainstDecoy('correct horse battery staple')).toBe(false);
    expect(derivations.count).toBe(2);

    const stored = await hashPassword('another password entirely');
    derivations.count = 0;
    expect(await checkPassword('correct horse battery staple', stored)).toEqual({ matches: false });
    expect(derivations.count).toBe(1);
  });
});
