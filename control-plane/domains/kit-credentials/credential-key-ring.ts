import { hkdfSync, randomBytes } from 'node:crypto';
import sodium from 'libsodium-wrappers';
import type { Kysely } from 'kysely';
import { generateCredentialKeyPair, type CredentialKeyRing } from '../../../kit-runtime/index.ts';
import type { Database } from '../../db/database.ts';

/** The key ring was sealed under another SERVER_SECRET. */
export class KeyRingSecretMismatch extends Error {
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

// Unique across every organization's keys: 64 random bits, so even a million keys made in one day
// collide with odds of about one in 37 million.
const newKeyId = () => `k${new Date().toISOString().slice(0, 10).replaceAll('-', '')}-${randomBytes(8).toString('hex')}`;

/** A new key pair as it is stored: its private key sealed. All a process without the key ring may hold of it. */
export type StorableCredentialKey = { keyId: string; publicKey: string; sealedPrivateKey: string };

/** Makes storable keys: what the API issues an organization's first key with. */
export type CredentialKeyMaker = { make(): Promise<StorableCredentialKey> };

export function createCredentialKeyMaker(serverSecret: string): CredentialKeyMaker {
  return {
    async make() {
      await sodium.ready;
      const pair = await generateCredentialKeyPair(newKeyId());
      return { keyId: pair.keyId, publicKey: pair.publicKey, sealedPrivateKey: sealPrivateKey(pair.privateKey, serverSecret) };
    },
  };
}

/**
 * Adds a key for the organization (a rotation, which retires the one before first), or the
 * server-wide one a first start makes (`null`); returns its id.
 */
export async function addCredentialKey(owner: Kysely<Database>, serverSecret: string, organizationId: string | null): Promise<string> {
  const key = await createCredentialKeyMaker(serverSecret).make();
  await owner
    .insertInto('credential_keys')
    .values({ key_id: key.keyId, organization_id: organizationId, public_key: key.publicKey, sealed_private_key: key.sealedPrivateKey })
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
  await addCredentialKey(owner, serverSecret, null);
}

/**
 * The keys that open an organization's credentials: its own and the server-wide ones of before,
 * never another organization's, so a value sealed to another organization's key does not open. Its
 * newest unretired key seals; `undefined` when there is no key to open anything with.
 */
export async function loadOrganizationKeyRing(owner: Kysely<Database>, serverSecret: string, organizationId: string): Promise<CredentialKeyRing | undefined> {
  await sodium.ready;
  const rows = await owner
    .selectFrom('credential_keys')
    .selectAll()
    .where((eb) => eb.or([eb('organization_id', '=', organizationId), eb('organization_id', 'is', null)]))
    .orderBy('created_at')
    .orderBy('key_id')
    .execute();
  if (rows.length === 0) return undefined;
  const current = rows.filter((row) => row.organization_id === organizationId && row.retired_at === null).at(-1) ?? rows.at(-1)!;
  return {
    currentKeyId: current.key_id,
    keys: rows.map((row) => ({ keyId: row.key_id, publicKey: row.public_key, privateKey: openPrivateKey(row.sealed_private_key, serverSecret) })),
  };
}

/**
 * Whether SERVER_SECRET opens the key ring: the newest key tells, all being sealed with the same
 * secret. True while there is no key (before the first start made one). Reads
 * only the columns every version of the table has: it runs before migrations.
 */
export async function keyRingOpensWith(owner: Kysely<Database>, serverSecret: string): Promise<boolean> {
  await sodium.ready;
  const newest = await owner.selectFrom('credential_keys').select('sealed_private_key').orderBy('created_at', 'desc').limit(1).executeTakeFirst();
  if (!newest) return true;
  try {
    openPrivateKey(newest.sealed_private_key, serverSecret);
    return true;
  } catch (error) {
    if (error instanceof KeyRingSecretMismatch) return false;
    throw error;
  }
}
