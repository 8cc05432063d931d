import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import sodium from 'libsodium-wrappers';
import type { Kysely } from 'kysely';
import { generateCredentialKeyPair, type CredentialKeyRing } from '../../../kit-runtime/index.ts';
import type { Database } from '../../db/database.ts';

/** The key ring was sealed under another SERVER_SECRET. */
class KeyRingSecretMismatch extends Error {
  override name = 'KeyRingSecretMismatch';
  constructor() {
    super('A credential key could not be opened: SERVER_SECRET differs from the one the key ring was created with');
  }
}

/**
 * The X25519 key ring lives in `credential_keys`: one current key per organization (its clients
 * seal to it), plus the server-wide keys of before, which still open what was sealed to them.
 * Private keys are stored sealed (secretbox) with a key derived from SERVER_SECRET: the database
 * alone cannot open a credential. The API role cannot read the table at all; it issues an
 * organization's first key through a definer function, handing over the private key already sealed
 * (`createCredentialKeyMaker`). Only the owner connection (workers) reads private keys back.
 *
 * Since the API's role can write an organization's key, so can anything running as that role (an
 * injected statement): each organization key carries a tag, an HMAC under another key derived from
 * SERVER_SECRET, and a key whose tag does not check out is never handed to clients nor opened with.
 */
function wrappingKey(serverSecret: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', serverSecret, 'specwright', 'credential-key-ring', sodium.crypto_secretbox_KEYBYTES));
}

function sealPrivateKey(privateKey: string, serverSecret: string): string {
  const nonce = sodium.randombytes_buf(sodium.crypto_secretbox_NONCEBYTES);
  const key = wrappingKey(serverSecret);
  const plain = sodium.from_base64(privateKey, sodium.base64_variants.ORIGINAL);
  try {
    const box = sodium.crypto_secretbox_easy(plain, nonce, key);
    return `${sodium.to_base64(nonce, sodium.base64_variants.ORIGINAL)}.${sodium.to_base64(box, sodium.base64_variants.ORIGINAL)}`;
  } finally {
    sodium.memzero(plain);
    sodium.memzero(key);
  }
}

function openPrivateKey(sealed: string, serverSecret: string): string {
  const [nonce, box] = sealed.split('.');
  const key = wrappingKey(serverSecret);
  let opened: Uint8Array;
  try {
    opened = sodium.crypto_secretbox_open_easy(sodium.from_base64(box!, sodium.base64_variants.ORIGINAL), sodium.from_base64(nonce!, sodium.base64_variants.ORIGINAL), key);
  } catch {
    throw new KeyRingSecretMismatch();
  } finally {
    sodium.memzero(key);
  }
  try {
    return sodium.to_base64(opened, sodium.base64_variants.ORIGINAL);
  } finally {
    sodium.memzero(opened);
  }
}

type TaggedKey = { keyId: string; organizationId: string; publicKey: string };

/** The tag of an organization's key, under a key derived from SERVER_SECRET: only the service can make it. */
function publicKeyTag(tagKey: Buffer, key: TaggedKey): string {
  return createHmac('sha256', tagKey).update(JSON.stringify([key.keyId, key.organizationId, key.publicKey])).digest('base64url');
}

// Unique across every organization's keys: 64 random bits, so even a million keys made in one day
// collide with odds of about one in 37 million.
const newKeyId = () => `k${new Date().toISOString().slice(0, 10).replaceAll('-', '')}-${randomBytes(8).toString('hex')}`;

/** A new key as it is stored: its private key sealed, its public key tagged (an organization's only). */
export type StorableCredentialKey = { keyId: string; publicKey: string; sealedPrivateKey: string; publicKeyTag: string | null };

/** Makes keys (the API an organization's first, workers the rest) and checks a stored one's tag. */
export type CredentialKeyMaker = {
  /** A key for the organization, or the server-wide one a first start makes (`null`, untagged: the app role cannot write one). */
  make(organizationId: string | null): Promise<StorableCredentialKey>;
  /** Whether the organization's key was made by the service, not planted. */
  madeByService(organizationId: string, key: { keyId: string; publicKey: string; tag: string | null }): boolean;
};

export function createCredentialKeyMaker(serverSecret: string): CredentialKeyMaker {
  // Derived once, as the download links' and session tokens' keys are.
  const tagKey = Buffer.from(hkdfSync('sha256', serverSecret, 'specwright', 'credential-key-tag', 32));
  return {
    async make(organizationId) {
      await sodium.ready;
      const pair = await generateCredentialKeyPair(newKeyId());
      const tag = organizationId === null ? null : publicKeyTag(tagKey, { keyId: pair.keyId, organizationId, publicKey: pair.publicKey });
      return { keyId: pair.keyId, publicKey: pair.publicKey, sealedPrivateKey: sealPrivateKey(pair.privateKey, serverSecret), publicKeyTag: tag };
    },
    madeByService(organizationId, key) {
      if (key.tag === null) return false;
      const expected = Buffer.from(publicKeyTag(tagKey, { ...key, organizationId }));
      const given = Buffer.from(key.tag);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/**
 * Adds a key for the organization (a rotation, which retires the one before first), or the
 * server-wide one a first start makes (`null`); returns its id.
 */
export async function addCredentialKey(owner: Kysely<Database>, keys: CredentialKeyMaker, organizationId: string | null): Promise<string> {
  const key = await keys.make(organizationId);
  await owner
    .insertInto('credential_keys')
    .values({ key_id: key.keyId, organization_id: organizationId, public_key: key.publicKey, sealed_private_key: key.sealedPrivateKey, public_key_tag: key.publicKeyTag })
    .execute();
  return key.keyId;
}

/**
 * At boot, under the boot lock: a first key when the ring has none. It belongs to no organization
 * and seals nothing; with it, a node started with another SERVER_SECRET is refused from the first
 * start on (`keyRingOpensWith`), not only once some organization has a key.
 */
export async function ensureKeyRingStarted(owner: Kysely<Database>, serverSecret: string): Promise<void> {
  const any = await owner.selectFrom('credential_keys').select('key_id').limit(1).executeTakeFirst();
  if (any) return;
  await addCredentialKey(owner, createCredentialKeyMaker(serverSecret), null);
}

/**
 * A stored key's private half, opened, when it opens with SERVER_SECRET and belongs to its public
 * half; undefined for a key whose row was damaged (its sealed private key or public key altered as
 * the owner: the tag covers neither the sealed half nor a server-wide key).
 */
function openStoredKey(row: { public_key: string; sealed_private_key: string }, serverSecret: string): string | undefined {
  let privateKey: string;
  try {
    privateKey = openPrivateKey(row.sealed_private_key, serverSecret);
  } catch {
    return undefined;
  }
  try {
    const opened = sodium.from_base64(privateKey, sodium.base64_variants.ORIGINAL);
    try {
      return sodium.to_base64(sodium.crypto_scalarmult_base(opened), sodium.base64_variants.ORIGINAL) === row.public_key ? privateKey : undefined;
    } finally {
      sodium.memzero(opened);
    }
  } catch {
    return undefined;
  }
}

/**
 * The keys that open an organization's credentials: its own that the service made (a planted one,
 * whose tag does not check out, is left out and named in `untrusted`), and the server-wide ones of
 * before until a rotation retires them (it moves what they sealed under the organization's key).
 * Never another organization's, so a value sealed to another organization's key does not open. A
 * key whose private half does not open with SERVER_SECRET, or does not belong to its public half
 * (its row damaged), is left out too and named in `unopenable`: what was sealed to it does not open
 * (and is marked invalid), and the organization's other credentials, and other organizations' turns
 * of a rotation, still do. Its newest unretired key seals; `ring` is undefined when there is no key
 * to open anything with.
 */
export async function loadOrganizationKeyRing(
  owner: Kysely<Database>,
  serverSecret: string,
  keys: CredentialKeyMaker,
  organizationId: string,
): Promise<{ ring: CredentialKeyRing | undefined; untrusted: string[]; unopenable: string[] }> {
  await sodium.ready;
  const found = await owner
    .selectFrom('credential_keys')
    .selectAll()
    .where((eb) => eb.or([eb('organization_id', '=', organizationId), eb.and([eb('organization_id', 'is', null), eb('retired_at', 'is', null)])]))
    .orderBy('created_at')
    .orderBy('key_id')
    .execute();
  const { true: rows = [], false: planted = [] } = Object.groupBy(found, (row) =>
    String(row.organization_id === null || keys.madeByService(organizationId, { keyId: row.key_id, publicKey: row.public_key, tag: row.public_key_tag })),
  );
  const untrusted = planted.map((row) => row.key_id);
  const unopenable: string[] = [];
  const opened = rows.flatMap((row) => {
    const privateKey = openStoredKey(row, serverSecret);
    if (privateKey === undefined) {
      unopenable.push(row.key_id);
      return [];
    }
    return [{ row, pair: { keyId: row.key_id, publicKey: row.public_key, privateKey } }];
  });
  if (opened.length === 0) return { ring: undefined, untrusted, unopenable };
  const current = opened.filter(({ row }) => row.organization_id === organizationId && row.retired_at === null).at(-1) ?? opened.at(-1)!;
  return { ring: { currentKeyId: current.row.key_id, keys: opened.map(({ pair }) => pair) }, untrusted, unopenable };
}

/**
 * Whether SERVER_SECRET opens the key ring: the oldest key tells, all being sealed with the same
 * secret — and the oldest is the one a first start made, as the owner (a key the API's role
 * planted is newer, and must not keep every node from starting). True while there is no key (before
 * the first start made one). Reads only the columns every version of the table has: it runs before
 * migrations.
 */
export async function keyRingOpensWith(owner: Kysely<Database>, serverSecret: string): Promise<boolean> {
  await sodium.ready;
  const oldest = await owner.selectFrom('credential_keys').select('sealed_private_key').orderBy('created_at').orderBy('key_id').limit(1).executeTakeFirst();
  if (!oldest) return true;
  try {
    openPrivateKey(oldest.sealed_private_key, serverSecret);
    return true;
  } catch (error) {
    if (error instanceof KeyRingSecretMismatch) return false;
    throw error;
  }
}
