import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { setTransactionTenant } from '../../db/tenant-transaction.ts';
import { conflict, notFound } from '../../errors/app-error.ts';
import { isUniqueViolation } from '../../db/postgres-errors.ts';
import { issueApiKey } from '../api-keys/api-keys.service.ts';
import type { CreatedTenant } from './tenants.schema.ts';
import { insertMembership, insertOrganization, insertTenant, insertUser, updateTenantFeatures } from './tenants.repository.ts';

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
  const apiKey = await issueApiKey(trx, { tenantId, userId: owner.id }, 'Owner key');
  return { tenantId, organizationId: organization.id, userId: owner.id, apiKey: apiKey.key };
}

export async function createTenantAsPlatformAdmin(
  trx: Kysely<Database>,
  adminTenantId: string,
  input: { name: string; ownerEmail: string; ownerName?: string | undefined },
): Promise<CreatedTenant> {
  const created = await createTenantWithOwner(trx, {
    name: input.name,
    ownerEmail: input.ownerEmail,
    ownerName: input.ownerName ?? input.ownerEmail.split('@')[0] ?? input.ownerEmail,
    ownerIsPlatformAdmin: false,
    features: { kits_enabled: false },
  });
  await setTransactionTenant(trx, adminTenantId);
  return created;
}

/** Switches a tenant's feature flags (platform admins); RLS is pointed at that tenant for the write. */
export async function setTenantFeatures(trx: Kysely<Database>, adminTenantId: string, tenantId: string, changes: Record<string, boolean>) {
  await setTransactionTenant(trx, tenantId);
  const updated = await updateTenantFeatures(trx, tenantId, changes);
  await setTransactionTenant(trx, adminTenantId);
  if (!updated) throw notFound('The tenant');
  return { tenantId: updated.id, features: updated.features };
}
