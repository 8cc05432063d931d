import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database } from '../../db/database.ts';
import { asTenant, setTransactionTenant } from '../../db/tenant-transaction.ts';
import { conflict, notFound } from '../../errors/app-error.ts';
import { isUniqueViolation } from '../../db/postgres-errors.ts';
import type { Logger } from '../../logger.ts';
import { lockApiKeysOfUser, revokeActiveApiKeysOfUser } from '../api-keys/api-keys.repository.ts';
import { issueApiKey } from '../api-keys/api-keys.service.ts';
import { MAX_OWNER_NAME_CHARACTERS, type CreatedTenant, type ReissuedOwnerKey } from './tenants.schema.ts';
import {
  findFirstOrganizationOfTenant,
  insertMembership,
  insertOrganization,
  insertTenant,
  insertUser,
  lockUserOfTenant,
  updateTenantFeatures,
} from './tenants.repository.ts';

export interface NewTenantSpec {
  name: string;
  ownerEmail: string;
  ownerName: string;
  ownerIsPlatformAdmin: boolean;
  features: Record<string, boolean>;
}

/**
 * A slug by the organization slug rules (single hyphens): hyphens are trimmed after the cut, which
 * may end on one. Slugs are unique across the platform and many tenants share a name ("Demo"), so
 * the suffix is 48 random bits: a clash (which would fail the creation) is not to be expected.
 */
function organizationSlug(name: string): string {
  const base = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 40).replace(/^-+|-+$/g, '') || 'org';
  return `${base}-${randomBytes(6).toString('hex')}`;
}

/**
 * Creates a tenant with its owner user, a first organization the owner owns, and the owner's first
 * API key. Must run inside a transaction: it points the transaction at the new tenant, so the
 * inserts pass row-level security, and callers restore their own tenant afterwards.
 */
export async function createTenantWithOwner(trx: Kysely<Database>, spec: NewTenantSpec): Promise<CreatedTenant> {
  const tenantId = randomUUID();
  await setTransactionTenant(trx, tenantId);
  await insertTenant(trx, { id: tenantId, name: spec.name, features: spec.features });
  const owner = await insertUser(trx, { tenantId, email: spec.ownerEmail, name: spec.ownerName, isPlatformAdmin: spec.ownerIsPlatformAdmin }).catch((error) => {
    // Emails are unique platform-wide; another tenant's user is invisible here but the index sees it.
    throw isUniqueViolation(error, 'users_email_key') ? conflict('A user with this email already exists', { field: 'ownerEmail' }) : error;
  });
  const organization = await insertOrganization(trx, { tenantId, name: spec.name, slug: organizationSlug(spec.name), displayName: spec.name, ownerId: owner.id });
  await insertMembership(trx, { tenantId, organizationId: organization.id, userId: owner.id, role: 'owner' });
  const apiKey = await issueApiKey(trx, { tenantId, userId: owner.id }, 'Owner key', { issuedByPlatform: true });
  return { tenantId, organizationId: organization.id, userId: owner.id, apiKey: apiKey.key };
}

/**
 * The owner's name when none is given: the email's local part, held to the bound a given name
 * meets. An address's local part may run to some 300 characters here (the email is bounded by 320
 * as a whole), and a longer name would list as no given name could.
 */
function ownerNameFromEmail(email: string): string {
  const localPart = email.slice(0, email.lastIndexOf('@')) || email;
  // ASCII (z.email takes nothing else), so characters and UTF-16 units, as zod's max counts, agree.
  return localPart.slice(0, MAX_OWNER_NAME_CHARACTERS);
}

export async function createTenantAsPlatformAdmin(
  trx: Kysely<Database>,
  adminTenantId: string,
  input: { name: string; ownerEmail: string; ownerName?: string | undefined },
): Promise<CreatedTenant> {
  const created = await createTenantWithOwner(trx, {
    name: input.name,
    ownerEmail: input.ownerEmail,
    ownerName: input.ownerName ?? ownerNameFromEmail(input.ownerEmail),
    ownerIsPlatformAdmin: false,
    features: { kits_enabled: false },
  });
  await setTransactionTenant(trx, adminTenantId);
  return created;
}

/** Switches a tenant's feature flags (platform admins); RLS is pointed at that tenant for the write. */
export async function setTenantFeatures(trx: Kysely<Database>, adminTenantId: string, tenantId: string, changes: Record<string, boolean>) {
  const updated = await asTenant(trx, tenantId, adminTenantId, () => updateTenantFeatures(trx, tenantId, changes));
  if (!updated) throw notFound('The tenant');
  return { tenantId: updated.id, features: updated.features };
}

/**
 * A new API key for the tenant's owner, for when the answer to the tenant's creation (the only
 * place their first key was shown) was lost: they have no password, so without a key they could
 * never get in, and the tenant cannot be created again (the email is taken). Issued only while
 * that answer can be presumed lost: the owner has no password, has never used a key, holds no key
 * they made themselves, no bearer token (their identity provider's) has ever authenticated them,
 * and they are still the owner the creation made. Otherwise they have got in, and make keys
 * themselves: CONFLICT. The owner's previous keys are revoked with it, so a lost answer's key,
 * should it surface, no longer works. The owner's row is locked first: two calls at once take
 * turns, and the later one revokes the earlier one's key, leaving one that works.
 */
export async function reissueOwnerApiKey(trx: Kysely<Database>, admin: Principal, tenantId: string, log: Logger): Promise<ReissuedOwnerKey> {
  const { reissued, revokedApiKeyIds } = await asTenant(trx, tenantId, admin.tenantId, () => reissueOwnerApiKeyInTenant(trx, tenantId));
  // Ids only: the key itself is never logged.
  log.info({ tenantId, ownerUserId: reissued.userId, adminUserId: admin.userId, apiKeyId: reissued.id, revokedApiKeyIds }, "a platform admin issued a new API key for a tenant's owner");
  return reissued;
}

async function reissueOwnerApiKeyInTenant(trx: Kysely<Database>, tenantId: string) {
  // The owner the creation made is the one its organization names; organizations are never
  // deleted, so a tenant without one (under row-level security: one not seen) does not exist.
  const organization = await findFirstOrganizationOfTenant(trx, tenantId);
  if (!organization) throw notFound('The tenant');
  const owner = await lockUserOfTenant(trx, tenantId, organization.owner_id);
  if (!owner) throw notFound("The tenant's owner");
  const unchanged = 'no key was issued and none was revoked';
  if (owner.is_platform_admin) {
    throw conflict(`The owner of this tenant is a platform admin (made at first run, whose key was written to bootstrap.json): ${unchanged}`);
  }
  if (owner.password_hash !== null) {
    throw conflict(`The owner of this tenant has a password: they sign in (POST /auth/login) and create API keys themselves; ${unchanged}`);
  }
  const keys = await lockApiKeysOfUser(trx, tenantId, owner.id);
  if (keys.some((key) => key.last_used_at !== null)) {
    throw conflict(`The owner of this tenant has already used an API key: they create API keys themselves (POST /developer/api-keys); ${unchanged}`);
  }
  if (keys.some((key) => !key.issued_by_platform)) {
    throw conflict(`The owner of this tenant has created an API key of their own: they create API keys themselves (POST /developer/api-keys); ${unchanged}`);
  }
  // The creation gave its owner a key (a reissue revokes it and gives another): an owner without
  // one is not that owner. owner_id moves to another owner when the one it named leaves
  // (keepOwnerIdOnAnOwner), so the creation's owner got in, and the one named now lost nothing.
  if (!keys.some((key) => key.issued_by_platform)) {
    throw conflict(`The owner of this tenant's organization is no longer the one its creation made (ownership has moved): owners create API keys themselves (POST /developer/api-keys); ${unchanged}`);
  }
  // Noted as the token is checked, outside this transaction (app_private.authenticate_user); the
  // owner's row lock above waits for a note under way, so a sign-in that has happened is seen here.
  if (owner.first_bearer_authenticated_at !== null) {
    throw conflict(`The owner of this tenant has signed in with a bearer token (their identity provider's): they create API keys themselves (POST /developer/api-keys); ${unchanged}`);
  }
  const revokedApiKeyIds = await revokeActiveApiKeysOfUser(trx, tenantId, owner.id);
  const apiKey = await issueApiKey(trx, { tenantId, userId: owner.id }, 'Owner key (reissued)', { issuedByPlatform: true });
  return { reissued: { ...apiKey, tenantId, userId: owner.id }, revokedApiKeyIds };
}
