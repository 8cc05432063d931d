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
 * The server's X25519 key ring lives in `credential_keys`, private keys sealed (secretbox) with a
 * key derived from SERVER_SECRET: the database alone cannot open a credential, nor can the API
 * role, which may not read the table at all. Only the owner connection (boot, workers) touches it.
 */
function wrappingKey(serverSecret: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', serverSecret, 'specwright', 'credential-key-ring', sodium.crypto_secretbox_KEYBYTES));
}

function sealPrivateKey(privateKey: string, serverSecret: string): string {
  const nonce = sodium.randombytes_buf(sodium.crypto_secretbox_NONCEBYTES);
  const box = sodium.crypto_secretbox_easy(sodium.from_base64(privateKey, sodium.base64_variants.ORIGINAL), nonce, wrappingKey(serverSecret));
  return `${sodium.to_base64(nonce, sodium.base64_variants.ORIGINAL)}.${sodium.to_base64(box, sodium.base64_variants.ORIGINAL)}`;
}

function openPrivateKey(sealed: string, serverSecret: string): string {
  const [nonce, box] = sealed.split('.');
  try {
    const key = sodium.crypto_secretbox_open_easy(sodium.from_base64(box!, sodium.base64_variants.ORIGINAL), sodium.from_base64(nonce!, sodium.base64_variants.ORIGINAL), wrappingKey(serverSecret));
    return sodium.to_base64(key, sodium.base64_variants.ORIGINAL);
  } catch {
    throw new KeyRingSecretMismatch();
  }
}

const newKeyId = () => `k${new Date().toISOString().slice(0, 10).replaceAll('-', '')}-${randomBytes(3).toString('hex')}`;

export async function addCredentialKey(owner: Kysely<Database>, serverSecret: string): Promise<string> {
  await sodium.ready;
  const pair = await generateCredentialKeyPair(newKeyId());
  await owner.insertInto('credential_keys').values({ key_id: pair.keyId, public_key: pair.publicKey, sealed_private_key: sealPrivateKey(pair.privateKey, serverSecret) }).execute();
  return pair.keyId;
}

/** At boot, under the boot lock: a first key when there is none. */
export async function ensureCredentialKey(owner: Kysely<Database>, serverSecret: string): Promise<void> {
  const current = await owner.selectFrom('credential_keys').select('key_id').where('retired_at', 'is', null).limit(1).executeTakeFirst();
  if (!current) await addCredentialKey(owner, serverSecret);
}

/** Every key still able to open stored values; the newest unretired one seals. */
export async function loadCredentialKeyRing(owner: Kysely<Database>, serverSecret: string): Promise<CredentialKeyRing> {
  await sodium.ready;
  const rows = await owner.selectFrom('credential_keys').selectAll().orderBy('created_at').execute();
  const current = rows.filter((row) => row.retired_at === null).at(-1);
  if (!current) throw new Error('The credential key ring has no active key');
  return {
    currentKeyId: current.key_id,
    keys: rows.map((row) => ({ keyId: row.key_id, publicKey: row.public_key, privateKey: openPrivateKey(row.sealed_private_key, serverSecret) })),
  };
}
