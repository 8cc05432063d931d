import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { CredentialSealError, createPublicCredentialSealer } from '../../../kit-runtime/index.ts';
import type { Principal } from '../../auth/principal.ts';
import type { Database, KitCredentialRow } from '../../db/database.ts';
import { invalid, notFound } from '../../errors/app-error.ts';
import { quotedId } from '../../errors/quoted-input.ts';
import type { Paging } from '../../http/paging.ts';
import { requireKitAccess, requireOrganizationKitFilter, requireOrganizationProject } from '../kits/kit-access.ts';
import { requireKit } from '../kits/kits.service.ts';
import type { StoreCredentialInput } from './kit-credentials.schema.ts';
import type { CredentialKeyMaker } from './credential-key-ring.ts';
import { deleteCredential, insertCredential, issueOrganizationKey, listCredentials, organizationPublicKey } from './kit-credentials.repository.ts';

type ListedCredential = Pick<KitCredentialRow, 'id' | 'kit_id' | 'project_id' | 'credential_type' | 'status' | 'key_id' | 'last_checked_at' | 'last_check_status' | 'created_at'>;

function credentialRowToCredential(row: ListedCredential) {
  return {
    id: row.id,
    kitId: row.kit_id,
    projectId: row.project_id,
    credentialType: row.credential_type,
    status: row.status,
    keyId: row.key_id,
    lastCheckedAt: row.last_checked_at?.toISOString() ?? null,
    lastCheckStatus: row.last_check_status,
    createdAt: row.created_at.toISOString(),
  };
}

/**
 * Seals to the organization's own key, issued the first time it is needed: a value sealed for one
 * organization does not open for another (the worker opens with the organization's keys only).
 */
async function organizationSealer(db: Kysely<Database>, keys: CredentialKeyMaker, orgId: string) {
  const key = (await organizationPublicKey(db, orgId)) ?? (await issueOrganizationKey(db, orgId, await keys.make(orgId)));
  // The caller's access to the organization was checked in this transaction: it exists.
  if (!key) throw new Error(`organization ${orgId} has no credential key and none could be issued`);
  // Written past the service (through the API's role): no secret is ever sealed to it. A rotation
  // replaces it. (An INTERNAL_ERROR: the log line says which key, the caller learns nothing.)
  if (!keys.madeByService(orgId, { keyId: key.key_id, publicKey: key.public_key, tag: key.public_key_tag })) {
    throw new Error(`credential key ${key.key_id} of organization ${orgId} was not made by the service: its tag does not check out; rotate the credential keys`);
  }
  return createPublicCredentialSealer({ keyId: key.key_id, key: key.public_key });
}

export async function getCredentialPublicKey(db: Kysely<Database>, keys: CredentialKeyMaker, principal: Principal, orgId: string) {
  await requireKitAccess(db, principal, orgId);
  return (await organizationSealer(db, keys, orgId)).publicKey();
}

/**
 * Stores a credential sealed to its organization's key, bound to its own row: plain values are sealed
 * here, client-sealed ones are wrapped unopened. The API opens nothing (it holds an organization's
 * private key only while issuing it, sealed at once), and the secret never reaches a response, a
 * log line or a job payload.
 */
export async function storeCredential(db: Kysely<Database>, keys: CredentialKeyMaker, principal: Principal, input: StoreCredentialInput) {
  await requireKitAccess(db, principal, input.orgId, 'admin');
  const kit = await requireKit(db, input.orgId, input.kitId);
  const declared = ((kit.manifest as { credentials?: Array<{ id: string }> } | null)?.credentials ?? []).map((credential) => credential.id);
  if (!declared.includes(input.credentialType)) {
    const issue = declared.length === 0 ? `kit ${input.kitId} declares no credentials` : `kit ${input.kitId} declares ${declared.map((id) => `"${id}"`).join(', ')}`;
    throw invalid(`credentialType "${quotedId(input.credentialType)}" is not a credential the kit declares: ${issue}`, { issues: [{ field: 'credentialType', issue }] });
  }
  await requireOrganizationProject(db, principal, input.orgId, input.projectId);
  const sealer = await organizationSealer(db, keys, input.orgId);
  const credentialId = randomUUID();
  const binding = { tenantId: principal.tenantId, credentialId };
  let sealed;
  try {
    sealed = input.sealedCredentials ? sealer.wrapClientValue(input.sealedCredentials, binding) : sealer.seal(binding, input.credentials!);
  } catch (error) {
    // Seal errors describe the shape, never the value.
    if (error instanceof CredentialSealError) throw invalid(error.message, { issues: [{ field: input.sealedCredentials ? 'sealedCredentials' : 'credentials', issue: error.message }] });
    throw error;
  }
  if (input.sealedCredentials && input.sealedCredentials.keyId !== sealed.keyId) {
    throw invalid(`sealedCredentials were sealed to key ${quotedId(input.sealedCredentials.keyId)}; seal to the current key from …/credentials/public-key`, {
      issues: [{ field: 'sealedCredentials.keyId', issue: 'not the current key' }],
    });
  }
  const row = await insertCredential(db, {
    id: credentialId,
    tenantId: principal.tenantId,
    organizationId: input.orgId,
    projectId: input.projectId,
    kitId: input.kitId,
    credentialType: input.credentialType,
    keyId: sealed.keyId,
    sealed: sealed.ciphertext,
    createdBy: principal.userId,
  });
  return { credentialId: row.id, status: 'active' as const, createdAt: row.created_at.toISOString() };
}

export async function listKitCredentials(
  db: Kysely<Database>,
  principal: Principal,
  input: Paging & { orgId: string; projectId?: string | undefined; kitId?: string | undefined },
) {
  await requireKitAccess(db, principal, input.orgId);
  if (input.projectId) await requireOrganizationProject(db, principal, input.orgId, input.projectId, 'forRead');
  if (input.kitId) await requireOrganizationKitFilter(db, input.orgId, input.kitId);
  const { rows, ...page } = await listCredentials(db, principal.tenantId, input.orgId, input);
  return { credentials: rows.map(credentialRowToCredential), ...page };
}

export async function removeCredential(db: Kysely<Database>, principal: Principal, input: { orgId: string; credentialId: string }) {
  await requireKitAccess(db, principal, input.orgId, 'admin');
  if (!(await deleteCredential(db, principal.tenantId, input.orgId, input.credentialId))) throw notFound('The credential');
  return { credentialId: input.credentialId, deleted: true as const };
}
