import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { pagedRows } from '../../db/paged-rows.ts';
import type { Paging } from '../../http/paging.ts';
import type { StorableCredentialKey } from './credential-key-ring.ts';

type PublicKeyRow = { key_id: string; public_key: string; public_key_tag: string | null };

/**
 * The organization's current key, when it has one (an organization of the transaction's tenant).
 * Waits for a key rotation under way, and holds one off until the transaction ends: a credential
 * stored meanwhile is sealed to the key the rotation moves everything to, or seen by it.
 */
export async function organizationPublicKey(db: Kysely<Database>, organizationId: string): Promise<PublicKeyRow | undefined> {
  const { rows } = await sql<PublicKeyRow>`select * from app_private.organization_credential_key(${organizationId})`.execute(db);
  return rows[0];
}

/** Issues the organization its first key; a key another request issued meanwhile wins. Returns the current key. */
export async function issueOrganizationKey(db: Kysely<Database>, organizationId: string, key: StorableCredentialKey): Promise<PublicKeyRow | undefined> {
  const { rows } = await sql<PublicKeyRow>`select * from app_private.issue_organization_credential_key(${organizationId}, ${key.keyId}, ${key.publicKey}, ${key.sealedPrivateKey}, ${key.publicKeyTag})`.execute(db);
  return rows[0];
}

export async function insertCredential(
  db: Kysely<Database>,
  values: { id: string; tenantId: string; organizationId: string; projectId: string; kitId: string; credentialType: string; keyId: string; sealed: string; createdBy: string },
) {
  return db
    .insertInto('kit_credentials')
    .values({
      id: values.id,
      tenant_id: values.tenantId,
      organization_id: values.organizationId,
      project_id: values.projectId,
      kit_id: values.kitId,
      credential_type: values.credentialType,
      key_id: values.keyId,
      sealed: values.sealed,
      created_by: values.createdBy,
    })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
}

// Listing never selects the sealed column: what is not read cannot leak.
const listedColumns = ['id', 'kit_id', 'project_id', 'credential_type', 'status', 'key_id', 'last_checked_at', 'last_check_status', 'created_at'] as const;

export async function listCredentials(
  db: Kysely<Database>,
  tenantId: string,
  organizationId: string,
  filter: Paging & { projectId?: string | undefined; kitId?: string | undefined },
) {
  let query = db.selectFrom('kit_credentials').where('tenant_id', '=', tenantId).where('organization_id', '=', organizationId);
  if (filter.projectId) query = query.where('project_id', '=', filter.projectId);
  if (filter.kitId) query = query.where('kit_id', '=', filter.kitId);
  return pagedRows(query.select(listedColumns).orderBy('created_at').orderBy('id'), query, filter);
}

export async function deleteCredential(db: Kysely<Database>, tenantId: string, organizationId: string, credentialId: string): Promise<boolean> {
  const result = await db.deleteFrom('kit_credentials').where('tenant_id', '=', tenantId).where('organization_id', '=', organizationId).where('id', '=', credentialId).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
