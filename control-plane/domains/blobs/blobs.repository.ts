import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';

/**
 * The blob store: bytes kept per tenant (execution bundles today, uploads later). Every read and
 * write of the `blobs` table goes through these functions and callers see no row of it, so a second
 * backend (S3-compatible) replaces this file, not queries scattered through the domains.
 */

export interface BlobToStore {
  tenantId: string;
  contentType: string;
  content: Buffer;
  /** Hex SHA-256 of `content`, served back as the download's `Digest`. */
  sha256: string;
}

export async function putBlob(db: Kysely<Database>, blob: BlobToStore): Promise<{ id: string }> {
  return db
    .insertInto('blobs')
    .values({ tenant_id: blob.tenantId, content_type: blob.contentType, content: blob.content, size_bytes: blob.content.length, sha256: blob.sha256 })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** A blob's bytes and what they are; undefined when the tenant has no such blob. */
export async function readBlob(db: Kysely<Database>, tenantId: string, blobId: string) {
  const row = await db.selectFrom('blobs').select(['content', 'content_type', 'sha256']).where('tenant_id', '=', tenantId).where('id', '=', blobId).executeTakeFirst();
  return row && { content: row.content, contentType: row.content_type, sha256: row.sha256 };
}

/**
 * What a download of a blob answers besides its bytes: their type, length and digest, for a HEAD.
 * `octet_length` of a bytea stored out of line is read from its TOAST pointer, so the bytes are not
 * fetched; the length is the bytes', as GET's Content-Length is, not the `size_bytes` written beside them.
 */
export async function readBlobDescription(db: Kysely<Database>, tenantId: string, blobId: string) {
  const row = await db
    .selectFrom('blobs')
    .select((eb) => ['content_type', 'sha256', eb.fn<number>('octet_length', ['content']).as('content_length')])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', blobId)
    .executeTakeFirst();
  return row && { contentType: row.content_type, contentLength: Number(row.content_length), sha256: row.sha256 };
}

/** What a blob is, without its bytes. */
export async function readBlobMeta(db: Kysely<Database>, tenantId: string, blobId: string) {
  const row = await db.selectFrom('blobs').select(['id', 'size_bytes', 'sha256']).where('tenant_id', '=', tenantId).where('id', '=', blobId).executeTakeFirst();
  return row && { id: row.id, sizeBytes: row.size_bytes, sha256: row.sha256 };
}

/**
 * Deletes the tenant's blobs of these ids; returns how many went. The ids travel as one array
 * parameter: a statement takes at most 65,535 parameters, and a project that ran that many bundled
 * executions sent one per id (`in ($2, $3, …)`), so deleting it failed every time.
 */
export async function deleteBlobs(db: Kysely<Database>, tenantId: string, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db.deleteFrom('blobs').where('tenant_id', '=', tenantId).where(sql<boolean>`id = any(${[...ids]}::uuid[])`).executeTakeFirst();
  return Number(result.numDeletedRows);
}
