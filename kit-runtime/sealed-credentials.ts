/**
 * Kit credentials at rest: libsodium sealed boxes (`crypto_box_seal`, X25519) under a versioned
 * key ring. The sealed plaintext carries the row it belongs to ({tenantId, credentialId}) and
 * `open` checks it, so a ciphertext copied onto another row — or another tenant's — does not open.
 * A client may seal a secret itself to `publicKey()` (as with GitHub Actions secrets); the server
 * opens that once and re-seals it bound to its row. A client value that opens to a stored envelope
 * (another row's ciphertext, replayed) is refused, so the binding cannot be stripped that way.
 *
 * No error from this module ever contains a secret or a ciphertext: messages say what failed, not
 * with what.
 */
import sodium from 'libsodium-wrappers';

export type CredentialKeyPair = { keyId: string; publicKey: string; privateKey: string };
/** Configuration: every key still needed to open stored values, and the one new seals use. */
export type CredentialKeyRing = { currentKeyId: string; keys: readonly CredentialKeyPair[] };
export type SealedCredential = { keyId: string; ciphertext: string };
export type CredentialBinding = { tenantId: string; credentialId: string };
export type CredentialSecret = Record<string, unknown>;

export type CredentialSealer = {
  /** What clients seal to: `{keyId, key}` with the key in standard base64. */
  publicKey(): { keyId: string; key: string };
  seal(binding: CredentialBinding, secret: CredentialSecret): SealedCredential;
  open(sealed: SealedCredential, binding: CredentialBinding): CredentialSecret;
  /** Opens a value the client sealed (the secret JSON alone) and re-seals it bound to its row. */
  sealClientValue(clientSealed: SealedCredential, binding: CredentialBinding): SealedCredential;
  /** Re-seals under the current key, unchanged inside; a value already under it is returned as is. */
  rotate(sealed: SealedCredential, binding: CredentialBinding): SealedCredential;
  needsRotation(sealed: SealedCredential): boolean;
};

export class CredentialSealError extends Error {
  override name = 'CredentialSealError';
}

type Plaintext = { v: 1; tenantId: string; credentialId: string; secret: CredentialSecret };
/**
 * A client-sealed value wrapped, unopened, by a holder of the public key only (the API): the
 * binding is sealed around it, and the secret inside is opened where the private key lives.
 */
type WrappedPlaintext = { v: 2; tenantId: string; credentialId: string; clientSealed: SealedCredential };
type Keys = { publicKey: Uint8Array; privateKey: Uint8Array };

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
// Loaded once per process; every sealer awaits the same promise.
const sodiumReady = sodium.ready;

export async function generateCredentialKeyPair(keyId: string): Promise<CredentialKeyPair> {
  await sodiumReady;
  if (!KEY_ID.test(keyId)) throw new CredentialSealError('key id must be 1-64 letters, digits, ".", "_" or "-"');
  const pair = sodium.crypto_box_keypair();
  return { keyId, publicKey: toBase64(pair.publicKey), privateKey: toBase64(pair.privateKey) };
}

export async function createCredentialSealer(ring: CredentialKeyRing): Promise<CredentialSealer> {
  await sodiumReady;
  const keys = new Map<string, Keys>();
  for (const pair of ring.keys) {
    if (!KEY_ID.test(pair.keyId)) throw new CredentialSealError('key id must be 1-64 letters, digits, ".", "_" or "-"');
    if (keys.has(pair.keyId)) throw new CredentialSealError(`key ${pair.keyId} appears twice in the key ring`);
    const publicKey = fromBase64(pair.publicKey, `public key of ${pair.keyId}`);
    const privateKey = fromBase64(pair.privateKey, `private key of ${pair.keyId}`);
    // A public key that does not belong to its private key would seal values nobody can open.
    if (!sodium.memcmp(sodium.crypto_scalarmult_base(privateKey), publicKey)) {
      throw new CredentialSealError(`public and private key of ${pair.keyId} do not belong together`);
    }
    keys.set(pair.keyId, { publicKey, privateKey });
  }
  const current = keys.get(ring.currentKeyId);
  if (!current) throw new CredentialSealError(`current key ${ring.currentKeyId} is not in the key ring`);

  const keysFor = (keyId: string): Keys => {
    const found = typeof keyId === 'string' ? keys.get(keyId) : undefined;
    if (!found) throw new CredentialSealError('sealed with a key that is not in the key ring');
    return found;
  };
  const openBytes = (sealed: SealedCredential, what: string): Uint8Array => {
    const { publicKey, privateKey } = keysFor(sealed?.keyId);
    const ciphertext = fromBase64(sealed.ciphertext, what);
    try {
      return sodium.crypto_box_seal_open(ciphertext, publicKey, privateKey);
    } catch {
      throw new CredentialSealError(`${what} could not be opened`);
    }
  };
  const sealBytes = (bytes: Uint8Array): SealedCredential => ({
    keyId: ring.currentKeyId,
    ciphertext: toBase64(sodium.crypto_box_seal(bytes, current.publicKey)),
  });
  const sealPlaintext = (plaintext: Plaintext): SealedCredential => {
    const bytes = sodium.from_string(JSON.stringify(plaintext));
    try {
      return sealBytes(bytes);
    } finally {
      sodium.memzero(bytes);
    }
  };
  const openPlaintext = (sealed: SealedCredential, binding: CredentialBinding): Plaintext => {
    const bytes = openBytes(sealed, 'sealed credential');
    let plaintext: { v?: number; tenantId?: string; credentialId?: string; secret?: unknown; clientSealed?: SealedCredential };
    try {
      plaintext = parseJsonObject(bytes, 'sealed credential');
    } finally {
      sodium.memzero(bytes);
    }
    if (plaintext.tenantId !== binding.tenantId || plaintext.credentialId !== binding.credentialId) {
      throw new CredentialSealError('sealed credential belongs to another credential');
    }
    // A secret that is itself an envelope was smuggled in as a client value (before that was refused).
    if (plaintext.v === 1 && isSecret(plaintext.secret)) {
      if (isEnvelope(plaintext.secret)) throw new CredentialSealError('sealed credential holds a stored credential envelope, not a secret');
      return plaintext as Plaintext;
    }
    if (plaintext.v === 2 && plaintext.clientSealed) {
      const inner = openBytes(plaintext.clientSealed, 'client-sealed value');
      try {
        return { v: 1, tenantId: binding.tenantId, credentialId: binding.credentialId, secret: parseClientSecret(inner) };
      } finally {
        sodium.memzero(inner);
      }
    }
    throw new CredentialSealError('sealed credential has an unknown format');
  };

  return {
    publicKey: () => ({ keyId: ring.currentKeyId, key: toBase64(current.publicKey) }),
    seal: (binding, secret) => {
      assertBinding(binding);
      assertSealable(secret);
      return sealPlaintext({ v: 1, tenantId: binding.tenantId, credentialId: binding.credentialId, secret });
    },
    open: (sealed, binding) => openPlaintext(sealed, binding).secret,
    sealClientValue: (clientSealed, binding) => {
      assertBinding(binding);
      const bytes = openBytes(clientSealed, 'client-sealed value');
      try {
        const secret = parseClientSecret(bytes);
        return sealPlaintext({ v: 1, tenantId: binding.tenantId, credentialId: binding.credentialId, secret });
      } finally {
        sodium.memzero(bytes);
      }
    },
    // A wrapped client value is re-sealed as a plain bound secret, so rotation retires every old key.
    rotate: (sealed, binding) => (sealed.keyId === ring.currentKeyId && !isWrapped(sealed) ? sealed : sealPlaintext(openPlaintext(sealed, binding))),
    needsRotation: (sealed) => sealed.keyId !== ring.currentKeyId || isWrapped(sealed),
  };

  function isWrapped(sealed: SealedCredential): boolean {
    const bytes = openBytes(sealed, 'sealed credential');
    try {
      return (parseJsonObject(bytes, 'sealed credential') as { v?: number }).v === 2;
    } finally {
      sodium.memzero(bytes);
    }
  }
}

/** What a process holding only the public key (the API) can do: seal, never open. */
export type PublicCredentialSealer = {
  publicKey(): { keyId: string; key: string };
  seal(binding: CredentialBinding, secret: CredentialSecret): SealedCredential;
  /** Binds a client-sealed value to its row without opening it. */
  wrapClientValue(clientSealed: SealedCredential, binding: CredentialBinding): SealedCredential;
};

export async function createPublicCredentialSealer(publicKey: { keyId: string; key: string }): Promise<PublicCredentialSealer> {
  await sodiumReady;
  if (!KEY_ID.test(publicKey.keyId)) throw new CredentialSealError('key id must be 1-64 letters, digits, ".", "_" or "-"');
  const key = fromBase64(publicKey.key, 'public key');
  if (key.length !== sodium.crypto_box_PUBLICKEYBYTES) throw new CredentialSealError('public key has the wrong length');
  const sealJson = (value: Plaintext | WrappedPlaintext): SealedCredential => {
    const bytes = sodium.from_string(JSON.stringify(value));
    try {
      return { keyId: publicKey.keyId, ciphertext: toBase64(sodium.crypto_box_seal(bytes, key)) };
    } finally {
      sodium.memzero(bytes);
    }
  };
  return {
    publicKey: () => ({ keyId: publicKey.keyId, key: publicKey.key }),
    seal: (binding, secret) => {
      assertBinding(binding);
      assertSealable(secret);
      return sealJson({ v: 1, tenantId: binding.tenantId, credentialId: binding.credentialId, secret });
    },
    wrapClientValue: (clientSealed, binding) => {
      assertBinding(binding);
      if (typeof clientSealed?.keyId !== 'string' || typeof clientSealed.ciphertext !== 'string' || clientSealed.ciphertext === '') {
        throw new CredentialSealError('a client-sealed value needs keyId and ciphertext');
      }
      // A sealed box carries an ephemeral public key and a MAC (48 bytes) around its plaintext, and
      // the smallest secret, `{}`, is 2 bytes: anything shorter can never open.
      if (fromBase64(clientSealed.ciphertext, 'client-sealed value').length < sodium.crypto_box_SEALBYTES + 2) {
        throw new CredentialSealError(`a client-sealed value is too short to be a crypto_box_seal of a JSON object (at least ${sodium.crypto_box_SEALBYTES + 2} bytes)`);
      }
      return sealJson({ v: 2, tenantId: binding.tenantId, credentialId: binding.credentialId, clientSealed: { keyId: clientSealed.keyId, ciphertext: clientSealed.ciphertext } });
    },
  };
}

function parseJsonObject(bytes: Uint8Array, what: string): CredentialSecret {
  let value: unknown;
  try {
    value = JSON.parse(sodium.to_string(bytes));
  } catch {
    // JSON.parse quotes the text it choked on; that text is the secret.
    throw new CredentialSealError(`${what} is not JSON`);
  }
  if (!isSecret(value)) throw new CredentialSealError(`${what} is not a JSON object`);
  return value;
}

/**
 * A client seals the secret alone, and a stored value seals an envelope naming its row, both to the
 * same key: another row's stored ciphertext submitted as a client value would open as the "secret"
 * of the submitter's row, envelope, other tenant's secret and all. So a client value whose
 * plaintext is shaped like an envelope (`v`, `tenantId` and `credentialId`) is refused, when it is
 * re-sealed and when a wrapped one is opened (the API, holding no private key, cannot look inside).
 * Stored plaintexts keep their format: rows sealed before this still open.
 */
function parseClientSecret(bytes: Uint8Array): CredentialSecret {
  const secret = parseJsonObject(bytes, 'client-sealed value');
  if (isEnvelope(secret)) throw new CredentialSealError('client-sealed value holds a stored credential envelope, not a secret; seal the secret itself');
  return secret;
}

function isEnvelope(secret: CredentialSecret): boolean {
  return ['v', 'tenantId', 'credentialId'].every((key) => Object.hasOwn(secret, key));
}

/** A secret `seal` accepts is one `open` returns: a JSON object not shaped like an envelope. */
function assertSealable(secret: unknown): asserts secret is CredentialSecret {
  if (!isSecret(secret)) throw new CredentialSealError('a credential secret must be a JSON object');
  if (isEnvelope(secret)) throw new CredentialSealError('a credential secret must not be shaped like a stored credential envelope ({v, tenantId, credentialId})');
}

function isSecret(value: unknown): value is CredentialSecret {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function assertBinding(binding: CredentialBinding): void {
  if (typeof binding?.tenantId !== 'string' || binding.tenantId === '' || typeof binding.credentialId !== 'string' || binding.credentialId === '') {
    throw new CredentialSealError('a credential must be bound to a tenantId and a credentialId');
  }
}

function toBase64(bytes: Uint8Array): string {
  return sodium.to_base64(bytes, sodium.base64_variants.ORIGINAL);
}

function fromBase64(text: string, what: string): Uint8Array {
  try {
    return sodium.from_base64(text, sodium.base64_variants.ORIGINAL);
  } catch {
    throw new CredentialSealError(`${what} is not valid base64`);
  }
}
