import { beforeAll, describe, expect, it } from 'vitest';
import sodium from 'libsodium-wrappers';
import { generateKeyPairSync } from 'node:crypto';
import {
  createCredentialSealer,
  createPublicCredentialSealer,
  generateCredentialKeyPair,
  CredentialSealError,
  CREDENTIAL_SECRET_BOUND,
  MAX_CLIENT_SEALED_CIPHERTEXT_LENGTH,
  type CredentialKeyPair,
  type CredentialSealer,
  type CredentialSecret,
  type PublicCredentialSealer,
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

/** Seals raw text to the ring's key, as a client does (or as rows were stored before a check existed). */
function sealText(text: string) {
  const ciphertext = sodium.crypto_box_seal(sodium.from_string(text), sodium.from_base64(sealer.publicKey().key, sodium.base64_variants.ORIGINAL));
  return { keyId: sealer.publicKey().keyId, ciphertext: sodium.to_base64(ciphertext, sodium.base64_variants.ORIGINAL) };
}
const sealJson = (value: unknown) => sealText(JSON.stringify(value));

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

  it('refuses a stored ciphertext submitted as a client value, re-sealed by the server or wrapped by the API', async () => {
    const api = await createPublicCredentialSealer(sealer.publicKey());
    const storedV1 = sealer.seal(victim, victimSecret);
    const storedV2 = api.wrapClientValue(sealJson(victimSecret), victim);
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
    const smuggled = sealJson({ v: 1, ...attacker, secret: { v: 1, ...victim, secret: victimSecret } });
    expectNoSecretIn(() => sealer.open(smuggled, attacker));
    expect(() => sealer.open(smuggled, attacker)).toThrow('sealed credential holds a stored credential envelope, not a secret');
    expect(() => sealer.seal(attacker, { v: 1, ...victim, secret: {} })).toThrow('must not be shaped like a stored credential envelope');
  });

  it('still opens rows stored in the format written so far', async () => {
    const clientValue = sealJson({ token: 'from-client', v: 3 });
    const rows = [
      { plaintext: { v: 1, ...victim, secret: victimSecret }, secret: victimSecret },
      // A secret may name a tenant or a version; only all three envelope keys together are refused.
      { plaintext: { v: 1, ...victim, secret: { token: 'x', tenantId: 'acme', v: 2 } }, secret: { token: 'x', tenantId: 'acme', v: 2 } },
      { plaintext: { v: 2, ...victim, clientSealed: clientValue }, secret: { token: 'from-client', v: 3 } },
    ];
    for (const { plaintext, secret: expected } of rows) expect(sealer.open(sealJson(plaintext), victim)).toEqual(expected);
  });
});

describe('a credential secret is bounded: 64 values, 32 levels, 16 KiB of JSON', () => {
  const binding = { tenantId: 'tenant-1', credentialId: 'cred-bounded' };
  /** `count` string values, each carrying `sk_live` so a message quoting one is caught. */
  const valuesSecret = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`key${i}`, `sk_live_value_${i}`]));
  /** A secret whose JSON is exactly `bytes` bytes: `{"token":"sk_live_xxx…"}`. */
  const sizedSecret = (bytes: number) => ({ token: 'sk_live_' + 'x'.repeat(bytes - '{"token":"sk_live_"}'.length) });
  /** An object nesting `levels` objects and arrays, built without recursion. */
  const nested = (levels: number): CredentialSecret => {
    let inner: unknown = 'sk_live_deep';
    for (let level = 1; level < levels; level += 1) inner = [inner];
    return { deep: inner };
  };
  let api: PublicCredentialSealer;

  beforeAll(async () => {
    await sodium.ready;
    api = await createPublicCredentialSealer(sealer.publicKey());
  });

  it('refuses 65 values or 16 KiB + 1 byte of JSON in either sealer, naming the bound and what it found, never a value', () => {
    expect(Buffer.byteLength(JSON.stringify(sizedSecret(16_385)))).toBe(16_385);
    for (const seal of [sealer.seal, api.seal]) {
      expectNoSecretIn(() => seal(binding, valuesSecret(65)));
      expect(() => seal(binding, valuesSecret(65))).toThrow('a credential secret holds 65 values; at most 64 are allowed (strings, numbers and booleans, at any depth)');
      // Values count at any depth, numbers and booleans too.
      const spread = { a: { b: [...Array.from({ length: 40 }, (_, i) => `sk_live_${i}`), { c: Array.from({ length: 20 }, (_, i) => i) }] }, d: [true, false, 1, 2, 'sk_live'] };
      expect(() => seal(binding, spread)).toThrow('holds 65 values');
      expectNoSecretIn(() => seal(binding, sizedSecret(16_385)));
      expect(() => seal(binding, sizedSecret(16_385))).toThrow('a credential secret is 16385 bytes of JSON; at most 16384 are allowed');
      // The reported secret: 40,000 short values (~900 KB) is refused at once, by count.
      expect(() => seal(binding, valuesSecret(40_000))).toThrow('holds 40000 values');
    }
    expect(CREDENTIAL_SECRET_BOUND).toEqual({ values: 64, bytes: 16_384, depth: 32 });
  });

  it('accepts exactly 64 values, exactly 16 KiB, and a service-account secret with a 4096-bit PEM key', () => {
    for (const accepted of [valuesSecret(64), sizedSecret(16_384), nested(32)]) {
      expect(sealer.open(sealer.seal(binding, accepted), binding)).toEqual(accepted);
      expect(sealer.open(api.seal(binding, accepted), binding)).toEqual(accepted);
    }
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 4096, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    const serviceAccount = {
      type: 'service_account',
      project_id: 'acme-prod-123456',
      private_key_id: 'a'.repeat(40),
      private_key: privateKey,
      client_email: 'specwright-deployer@acme-prod-123456.iam.gserviceaccount.com',
      client_id: '123456789012345678901',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: 'https://oauth2.googleapis.com/token',
      auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
      client_x509_cert_url: 'https://www.googleapis.com/robot/v1/metadata/x509/specwright-deployer%40acme-prod-123456.iam.gserviceaccount.com',
      universe_domain: 'googleapis.com',
    };
    // Comfortably inside: well under a third of the bytes, 11 of the 64 values.
    expect(Buffer.byteLength(JSON.stringify(serviceAccount))).toBeLessThan(CREDENTIAL_SECRET_BOUND.bytes / 3);
    expect(sealer.open(sealer.seal(binding, serviceAccount), binding)).toEqual(serviceAccount);
    const clientSealed = sealText(JSON.stringify(serviceAccount, null, 2));
    expect(sealer.open(sealer.sealClientValue(clientSealed, binding), binding)).toEqual(serviceAccount);
    expect(sealer.open(api.wrapClientValue(clientSealed, binding), binding)).toEqual(serviceAccount);
  });

  it('refuses a client value beyond the bound when it is re-sealed, and a wrapped one does not open', () => {
    const cases: Array<[string, string]> = [
      [JSON.stringify(valuesSecret(65)), 'client-sealed value holds 65 values; at most 64 are allowed'],
      [JSON.stringify(sizedSecret(16_385)), 'client-sealed value is 16385 bytes of JSON; at most 16384 are allowed'],
    ];
    for (const [text, message] of cases) {
      const clientSealed = sealText(text);
      expectNoSecretIn(() => sealer.sealClientValue(clientSealed, binding));
      expect(() => sealer.sealClientValue(clientSealed, binding)).toThrow(message);
      // Wrapped by the API (which cannot look inside) — or, for one too large to wrap now, as a row
      // stored before the bound was — it is refused where it is opened, and by rotation.
      const wrapped = text.length <= CREDENTIAL_SECRET_BOUND.bytes ? api.wrapClientValue(clientSealed, binding) : sealJson({ v: 2, ...binding, clientSealed });
      expectNoSecretIn(() => sealer.open(wrapped, binding));
      expect(() => sealer.open(wrapped, binding)).toThrow(message);
      expect(() => sealer.rotate(wrapped, binding)).toThrow(message);
    }
    const within = sealJson(valuesSecret(64));
    expect(sealer.open(sealer.sealClientValue(within, binding), binding)).toEqual(valuesSecret(64));
    expect(sealer.open(api.wrapClientValue(within, binding), binding)).toEqual(valuesSecret(64));
  });

  it('refuses a client value that holds no value, as the API refuses such a `credentials` secret: it would hide an older one that works', () => {
    for (const empty of [{}, { token: '', nested: { other: null, list: [] } }]) {
      const clientSealed = sealJson(empty);
      expect(() => sealer.sealClientValue(clientSealed, binding)).toThrow('client-sealed value holds no value');
      const wrapped = api.wrapClientValue(clientSealed, binding);
      expect(() => sealer.open(wrapped, binding)).toThrow('client-sealed value holds no value');
      expect(() => sealer.rotate(wrapped, binding)).toThrow('client-sealed value holds no value');
    }
    expect(sealer.open(api.wrapClientValue(sealJson({ nested: [false] }), binding), binding)).toEqual({ nested: [false] });
  });

  it('refuses a deeply nested value, sealed or opened, without overflowing the stack', () => {
    const deepText = (levels: number) => '{"deep":' + '['.repeat(levels - 1) + '"sk_live_deep"' + ']'.repeat(levels - 1) + '}';
    // 20,000 levels is over the size bound; 5,000 levels fits in 16 KiB, and JSON.stringify overflows on it.
    expect(deepText(5_000).length).toBeLessThan(CREDENTIAL_SECRET_BOUND.bytes);
    const refusals: Array<[string, string]> = [
      [deepText(20_000), 'client-sealed value is 40021 bytes of JSON'],
      [deepText(5_000), 'client-sealed value nests more than 32 levels of objects and arrays; at most 32 are allowed'],
      [deepText(33), 'client-sealed value nests more than 32 levels'],
    ];
    for (const [text, message] of refusals) {
      const clientSealed = sealText(text);
      expectNoSecretIn(() => sealer.sealClientValue(clientSealed, binding));
      expect(() => sealer.sealClientValue(clientSealed, binding)).toThrow(message);
      const wrapped = sealJson({ v: 2, ...binding, clientSealed });
      expect(() => sealer.open(wrapped, binding)).toThrow(message);
    }
    for (const seal of [sealer.seal, api.seal]) {
      expectNoSecretIn(() => seal(binding, nested(20_000)));
      expect(() => seal(binding, nested(20_000))).toThrow('a credential secret nests more than 32 levels');
      expect(() => seal(binding, nested(33))).toThrow('a credential secret nests more than 32 levels');
    }
  });

  it('no longer opens a row stored before the bound that exceeds it', () => {
    const stored = sealJson({ v: 1, ...binding, secret: valuesSecret(40_000) });
    expectNoSecretIn(() => sealer.open(stored, binding));
    expect(() => sealer.open(stored, binding)).toThrow('sealed credential holds 40000 values; at most 64 are allowed');
  });

  it('lets the API refuse a sealed box too large for the bound, before wrapping it', () => {
    const box = (plaintextBytes: number) => sealText('x'.repeat(plaintextBytes));
    const largest = box(CREDENTIAL_SECRET_BOUND.bytes);
    expect(largest.ciphertext.length).toBe(MAX_CLIENT_SEALED_CIPHERTEXT_LENGTH);
    expect(api.wrapClientValue(largest, binding).keyId).toBe('k1');
    const tooLarge = box(CREDENTIAL_SECRET_BOUND.bytes + 1);
    // Its base64 is no longer than the largest box's: only the decoded length tells them apart.
    expect(tooLarge.ciphertext.length).toBe(MAX_CLIENT_SEALED_CIPHERTEXT_LENGTH);
    expect(() => api.wrapClientValue(tooLarge, binding)).toThrow('a client-sealed value is a 16433-byte sealed box; at most 16432 are allowed (16384 bytes of JSON and 48 of sealing)');
  });
});
