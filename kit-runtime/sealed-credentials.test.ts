import { beforeAll, describe, expect, it } from 'vitest';
import sodium from 'libsodium-wrappers';
import {
  createCredentialSealer,
  generateCredentialKeyPair,
  CredentialSealError,
  type CredentialKeyPair,
  type CredentialSealer,
} from './sealed-credentials.ts';

const row = { tenantId: 'tenant-1', credentialId: 'cred-1' };
const secret = { apiKey: 'sk_live_very_secret_value' };
let k1: CredentialKeyPair;
let k2: CredentialKeyPair;
let sealer: CredentialSealer;

beforeAll(async () => {
  k1 = await generateCredentialKeyPair('k1');
  k2 = await generateCredentialKeyPair('k2');
  sealer = await createCredentialSealer({ currentKeyId: 'k1', keys: [k1] });
});

function expectNoSecretIn(fn: () => unknown): void {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CredentialSealError);
    expect(String((error as Error).message)).not.toContain('sk_live');
    expect(String((error as Error).stack)).not.toContain('sk_live');
    return;
  }
  throw new Error('expected a CredentialSealError');
}

describe('sealed credentials', () => {
  it('seals and opens a secret bound to its row', () => {
    const sealed = sealer.seal(row, secret);
    expect(sealed.keyId).toBe('k1');
    expect(sealed.ciphertext).not.toContain('sk_live');
    expect(sealer.open(sealed, row)).toEqual(secret);
  });

  it('does not open a ciphertext copied to another row or tenant', () => {
    const sealed = sealer.seal(row, secret);
    expectNoSecretIn(() => sealer.open(sealed, { ...row, credentialId: 'cred-2' }));
    expectNoSecretIn(() => sealer.open(sealed, { ...row, tenantId: 'tenant-2' }));
    expect(() => sealer.open(sealed, { ...row, tenantId: 'tenant-2' })).toThrow('sealed credential belongs to another credential');
  });

  it('rejects tampered ciphertexts and unknown keys without echoing anything', () => {
    const sealed = sealer.seal(row, secret);
    const bytes = Buffer.from(sealed.ciphertext, 'base64');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
    expect(() => sealer.open({ keyId: 'k1', ciphertext: bytes.toString('base64') }, row)).toThrow('sealed credential could not be opened');
    expect(() => sealer.open({ keyId: 'k9', ciphertext: sealed.ciphertext }, row)).toThrow('sealed with a key that is not in the key ring');
    expect(() => sealer.open({ keyId: 'k1', ciphertext: '%%%' }, row)).toThrow('not valid base64');
  });

  it('accepts a value the client sealed to the public key and re-seals it bound', async () => {
    await sodium.ready;
    const { keyId, key } = sealer.publicKey();
    expect(keyId).toBe('k1');
    const clientCiphertext = sodium.to_base64(
      sodium.crypto_box_seal(JSON.stringify(secret), sodium.from_base64(key, sodium.base64_variants.ORIGINAL)),
      sodium.base64_variants.ORIGINAL,
    );
    const stored = sealer.sealClientValue({ keyId, ciphertext: clientCiphertext }, row);
    expect(stored.ciphertext).not.toBe(clientCiphertext);
    expect(sealer.open(stored, row)).toEqual(secret);
    // The client's own ciphertext is not a stored value: it carries no binding.
    expect(() => sealer.open({ keyId, ciphertext: clientCiphertext }, row)).toThrow(CredentialSealError);
  });

  it('never quotes a client value that is not a JSON object', async () => {
    await sodium.ready;
    const pk = sodium.from_base64(sealer.publicKey().key, sodium.base64_variants.ORIGINAL);
    const seal = (text: string) => ({ keyId: 'k1', ciphertext: sodium.to_base64(sodium.crypto_box_seal(text, pk), sodium.base64_variants.ORIGINAL) });
    expectNoSecretIn(() => sealer.sealClientValue(seal('sk_live_not_json'), row));
    expectNoSecretIn(() => sealer.sealClientValue(seal('"sk_live_string"'), row));
  });

  it('rotates every value to the new key, losing none, and still opens old ones meanwhile', async () => {
    const old = Array.from({ length: 5 }, (_, i) => ({ binding: { tenantId: 't', credentialId: `c${i}` }, secret: { token: `sk_live_${i}` } }));
    const sealedUnderK1 = old.map((o) => sealer.seal(o.binding, o.secret));
    const rotating = await createCredentialSealer({ currentKeyId: 'k2', keys: [k1, k2] });
    expect(rotating.publicKey().keyId).toBe('k2');
    const rotated = sealedUnderK1.map((s, i) => {
      expect(rotating.needsRotation(s)).toBe(true);
      expect(rotating.open(s, old[i]!.binding)).toEqual(old[i]!.secret);
      return rotating.rotate(s, old[i]!.binding);
    });
    expect(rotated.every((s) => s.keyId === 'k2' && !rotating.needsRotation(s))).toBe(true);
    expect(rotating.rotate(rotated[0]!, old[0]!.binding)).toBe(rotated[0]);
    const afterRetirement = await createCredentialSealer({ currentKeyId: 'k2', keys: [k2] });
    rotated.forEach((s, i) => expect(afterRetirement.open(s, old[i]!.binding)).toEqual(old[i]!.secret));
    expect(() => afterRetirement.open(sealedUnderK1[0]!, old[0]!.binding)).toThrow('not in the key ring');
    expect(() => rotating.rotate(sealedUnderK1[0]!, { tenantId: 'other', credentialId: 'c0' })).toThrow('belongs to another credential');
  });

  it('refuses a key ring whose keys do not belong together or lack the current key', async () => {
    await expect(createCredentialSealer({ currentKeyId: 'k1', keys: [{ ...k1, publicKey: k2.publicKey }] })).rejects.toThrow('do not belong together');
    await expect(createCredentialSealer({ currentKeyId: 'k3', keys: [k1] })).rejects.toThrow('current key k3 is not in the key ring');
  });
});

describe('the public sealer (the API holds only the public key)', () => {
  it('seals bound secrets and wraps client-sealed values that only the key ring opens', async () => {
    const { createPublicCredentialSealer } = await import('./sealed-credentials.ts');
    const pair = await generateCredentialKeyPair('k1');
    const ring = await createCredentialSealer({ currentKeyId: 'k1', keys: [pair] });
    const publicSealer = await createPublicCredentialSealer(ring.publicKey());
    const binding = { tenantId: 't1', credentialId: 'c1' };

    expect(ring.open(publicSealer.seal(binding, { token: 'abc' }), binding)).toEqual({ token: 'abc' });

    const sodium = (await import('libsodium-wrappers')).default;
    await sodium.ready;
    const clientSealed = {
      keyId: 'k1',
      ciphertext: sodium.to_base64(sodium.crypto_box_seal(sodium.from_string('{"token":"from-client"}'), sodium.from_base64(ring.publicKey().key, sodium.base64_variants.ORIGINAL)), sodium.base64_variants.ORIGINAL),
    };
    const wrapped = publicSealer.wrapClientValue(clientSealed, binding);
    expect(ring.open(wrapped, binding)).toEqual({ token: 'from-client' });
    // Moved to another row, the wrapper refuses to open, though the inner value is untouched.
    expect(() => ring.open(wrapped, { tenantId: 't1', credentialId: 'c2' })).toThrow('belongs to another credential');
    // Rotation turns the wrapper into a plain bound secret under the current key.
    expect(ring.needsRotation(wrapped)).toBe(true);
    const rotated = ring.rotate(wrapped, binding);
    expect(ring.needsRotation(rotated)).toBe(false);
    expect(ring.open(rotated, binding)).toEqual({ token: 'from-client' });
  });
});

describe('client values cannot carry another row\'s stored credential', () => {
  const victim = { tenantId: 'tenant-victim', credentialId: 'git-token' };
  const attacker = { tenantId: 'tenant-attacker', credentialId: 'git-token' };
  const victimSecret = { token: 'sk_live_victim_token' };

  /** Seals raw JSON to the ring's key, as a client, or as rows were stored before this check. */
  async function sealRaw(ring: CredentialSealer, value: unknown) {
    await sodium.ready;
    const { keyId, key } = ring.publicKey();
    const ciphertext = sodium.crypto_box_seal(sodium.from_string(JSON.stringify(value)), sodium.from_base64(key, sodium.base64_variants.ORIGINAL));
    return { keyId, ciphertext: sodium.to_base64(ciphertext, sodium.base64_variants.ORIGINAL) };
  }

  it('refuses a stored ciphertext submitted as a client value, re-sealed by the server or wrapped by the API', async () => {
    const { createPublicCredentialSealer } = await import('./sealed-credentials.ts');
    const api = await createPublicCredentialSealer(sealer.publicKey());
    const storedV1 = sealer.seal(victim, victimSecret);
    const storedV2 = api.wrapClientValue(await sealRaw(sealer, victimSecret), victim);
    expect(sealer.open(storedV2, victim)).toEqual(victimSecret);

    for (const stored of [storedV1, storedV2]) {
      expectNoSecretIn(() => sealer.sealClientValue(stored, attacker));
      expect(() => sealer.sealClientValue(stored, attacker)).toThrow('client-sealed value holds a stored credential envelope, not a secret');
      // The API cannot look inside; the wrapped value is refused where it is opened, and by rotation.
      const wrapped = api.wrapClientValue(stored, attacker);
      expectNoSecretIn(() => sealer.open(wrapped, attacker));
      expect(() => sealer.open(wrapped, attacker)).toThrow('client-sealed value holds a stored credential envelope, not a secret');
      expect(() => sealer.rotate(wrapped, attacker)).toThrow('client-sealed value holds a stored credential envelope');
    }
  });

  it('refuses a row that already holds a smuggled envelope, and a secret shaped like one', async () => {
    // What sealClientValue stored for a replayed ciphertext before it refused them.
    const smuggled = await sealRaw(sealer, { v: 1, ...attacker, secret: { v: 1, ...victim, secret: victimSecret } });
    expectNoSecretIn(() => sealer.open(smuggled, attacker));
    expect(() => sealer.open(smuggled, attacker)).toThrow('sealed credential holds a stored credential envelope, not a secret');
    expect(() => sealer.seal(attacker, { v: 1, ...victim, secret: {} })).toThrow('must not be shaped like a stored credential envelope');
  });

  it('still opens rows stored in the format written so far', async () => {
    const clientValue = await sealRaw(sealer, { token: 'from-client', v: 3 });
    const rows = [
      { plaintext: { v: 1, ...victim, secret: victimSecret }, secret: victimSecret },
      // A secret may name a tenant or a version; only all three envelope keys together are refused.
      { plaintext: { v: 1, ...victim, secret: { token: 'x', tenantId: 'acme', v: 2 } }, secret: { token: 'x', tenantId: 'acme', v: 2 } },
      { plaintext: { v: 2, ...victim, clientSealed: clientValue }, secret: { token: 'from-client', v: 3 } },
    ];
    for (const { plaintext, secret: expected } of rows) expect(sealer.open(await sealRaw(sealer, plaintext), victim)).toEqual(expected);
  });
});
