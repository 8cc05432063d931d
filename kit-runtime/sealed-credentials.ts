/**
 * Kit credentials at rest: libsodium sealed boxes (`crypto_box_seal`, X25519) under a versioned
 * key ring. The sealed plaintext carries the row it belongs to ({tenantId, credentialId}) and
 * `open` checks it, so a ciphertext copied onto another row — or another tenant's — does not open.
 * A client may seal a secret itself to `publicKey()` (as with GitHub Actions secrets); the server
 * opens that once and re-seals it bound to its row. A client value that opens to a stored envelope
 * (another row's ciphertext, replayed) is refused, so the binding cannot be stripped that way.
 *
 * Every secret is bounded (`CREDENTIAL_SECRET_BOUND`): `seal` refuses a larger one, and a client
 * value beyond it is refused wherever it is opened, so the worker marks its row invalid and never
 * hands it to a run.
 *
 * No error from this module ever contains a secret or a ciphertext: messages say what failed, not
 * with what.
 */
import sodium from 'libsodium-wrappers';
import { nestsDeeperThan } from './json-depth.ts';

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

/**
 * The most one credential secret may hold: `values` strings, numbers and booleans at any depth,
 * `bytes` bytes of JSON (UTF-8, as JSON.stringify writes it) and `depth` levels of objects and
 * arrays. A run remembers some ten encoded forms of every value it opens and matches each log line
 * and APPLY result against all of them, short texts on the worker's thread (long ones on a thread of
 * their own, secret-redaction.ts): a secret of 40,000 values blocked the whole process for
 * seconds. Real credentials fit with room to spare: a token, a key pair, a
 * GCP service-account JSON with a 4096-bit PEM key (~4 KB, 11 values). Depth is bounded because
 * 16 KiB of `[` nests thousands of levels, deeper than JSON.stringify can walk.
 */
export const CREDENTIAL_SECRET_BOUND = Object.freeze({ values: 64, bytes: 16_384, depth: 32 } as const);

/** What `crypto_box_seal` adds to its plaintext (crypto_box_SEALBYTES): an ephemeral public key and a MAC. */
const SEALED_BOX_OVERHEAD = 32 + 16;
/** The largest sealed box holding a secret within the bound. */
const MAX_CLIENT_SEALED_BYTES = CREDENTIAL_SECRET_BOUND.bytes + SEALED_BOX_OVERHEAD;
/** Its length in standard base64: the longest `ciphertext` worth accepting for a client-sealed value. */
export const MAX_CLIENT_SEALED_CIPHERTEXT_LENGTH = 4 * Math.ceil(MAX_CLIENT_SEALED_BYTES / 3);

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
// Loaded once per process; every sealer awaits the same promise. The overhead above is a constant
// (the schema needs it before libsodium loads); this checks it is libsodium's.
const sodiumReady = sodium.ready.then(() => {
  if (sodium.crypto_box_SEALBYTES !== SEALED_BOX_OVERHEAD) throw new CredentialSealError(`libsodium's sealed boxes add ${sodium.crypto_box_SEALBYTES} bytes, not ${SEALED_BOX_OVERHEAD}`);
});
// A failed check reaches every factory that awaits it; this only keeps it from crashing a process
// that never calls one.
sodiumReady.catch(() => {});

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
      // Rows sealed before the bound existed may exceed it: they no longer open, and never reach a run.
      assertWithinBound(plaintext.secret, 'sealed credential');
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
      const length = fromBase64(clientSealed.ciphertext, 'client-sealed value').length;
      if (length < sodium.crypto_box_SEALBYTES + 2) {
        throw new CredentialSealError(`a client-sealed value is too short to be a crypto_box_seal of a JSON object (at least ${sodium.crypto_box_SEALBYTES + 2} bytes)`);
      }
      // The API cannot count the values inside, but it can refuse a box too large to hold a secret
      // within the bound; the rest of the bound is checked where the value is opened.
      if (length > MAX_CLIENT_SEALED_BYTES) {
        throw new CredentialSealError(
          `a client-sealed value is a ${length}-byte sealed box; at most ${MAX_CLIENT_SEALED_BYTES} are allowed (${CREDENTIAL_SECRET_BOUND.bytes} bytes of JSON and ${SEALED_BOX_OVERHEAD} of sealing)`,
        );
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
 *
 * A client value is also held to the bound here, the first place it is seen in the clear: its
 * size before it is parsed, then what it holds.
 */
function parseClientSecret(bytes: Uint8Array): CredentialSecret {
  if (bytes.length > CREDENTIAL_SECRET_BOUND.bytes) {
    throw new CredentialSealError(`client-sealed value is ${bytes.length} bytes of JSON; at most ${CREDENTIAL_SECRET_BOUND.bytes} are allowed`);
  }
  const secret = parseJsonObject(bytes, 'client-sealed value');
  if (isEnvelope(secret)) throw new CredentialSealError('client-sealed value holds a stored credential envelope, not a secret; seal the secret itself');
  assertWithinBound(secret, 'client-sealed value');
  // As the API refuses an empty `credentials` secret: as the newest of its type, an empty one would
  // hide an older credential that works. The API cannot look inside a client value; this is where
  // it is seen, so one that holds nothing does not open (its row is marked invalid, and skipped).
  if (!holdsAValue(secret)) throw new CredentialSealError('client-sealed value holds no value (a non-empty string, a number or a boolean)');
  return secret;
}

/**
 * Whether a secret holds anything: a non-empty string, a number or a boolean, at any depth (callers
 * bound its depth first). An empty one would still open, so as the newest of its type it would hide
 * an older credential that works.
 */
export function holdsAValue(value: unknown): boolean {
  if (typeof value === 'string') return value !== '';
  if (typeof value === 'number' || typeof value === 'boolean') return true;
  return value !== null && typeof value === 'object' && Object.values(value).some(holdsAValue);
}

function isEnvelope(secret: CredentialSecret): boolean {
  return ['v', 'tenantId', 'credentialId'].every((key) => Object.hasOwn(secret, key));
}

/** A secret `seal` accepts is one `open` returns: a JSON object not shaped like an envelope, within the bound. */
function assertSealable(secret: unknown): asserts secret is CredentialSecret {
  if (!isSecret(secret)) throw new CredentialSealError('a credential secret must be a JSON object');
  if (isEnvelope(secret)) throw new CredentialSealError('a credential secret must not be shaped like a stored credential envelope ({v, tenantId, credentialId})');
  assertWithinBound(secret, 'a credential secret');
}

/**
 * Refuses a secret beyond CREDENTIAL_SECRET_BOUND. The message gives the bound and what was found
 * (a count, a size), never a value. Depth comes first, from a walk that cannot overflow (and ends on
 * a cyclic object), so the count and JSON.stringify only ever walk a value shallow enough for them.
 */
function assertWithinBound(secret: CredentialSecret, what: string): void {
  const { values, depth, bytes } = CREDENTIAL_SECRET_BOUND;
  if (nestsDeeperThan(secret, depth)) throw new CredentialSealError(`${what} nests more than ${depth} levels of objects and arrays; at most ${depth} are allowed`);
  const count = countValues(secret);
  if (count > values) {
    throw new CredentialSealError(`${what} holds ${count} values; at most ${values} are allowed (strings, numbers and booleans, at any depth)`);
  }
  const size = Buffer.byteLength(JSON.stringify(secret), 'utf8');
  if (size > bytes) throw new CredentialSealError(`${what} is ${size} bytes of JSON; at most ${bytes} are allowed`);
}

/** A value's strings, numbers and booleans, at any depth (called once its depth is known to be bounded). */
function countValues(value: unknown): number {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return 1;
  if (value === null || typeof value !== 'object') return 0;
  let count = 0;
  for (const child of Object.values(value)) count += countValues(child);
  return count;
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
